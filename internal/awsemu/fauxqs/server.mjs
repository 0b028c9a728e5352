// Starts fauxqs (an independent SQS emulator from npm) on 127.0.0.1 and prints
// "listening http://127.0.0.1:<port>" once it accepts requests. fauxqs's own
// startFauxqs() binds 0.0.0.0, so this goes through buildApp + app.listen.
// Usage: node server.mjs <node_modules dir> [port]
import path from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
const port = Number(process.argv[3] ?? 0);
// fauxqs exports only an ESM "import" entry, dist/app.js.
const entry = path.join(modules, "fauxqs", "dist", "app.js");
const { buildApp } = await import(pathToFileURL(entry).href);
const app = buildApp({ logger: false });
const address = await app.listen({ port, host: "127.0.0.1" });
console.log(`listening ${address}`);
const stop = async () => { await app.close(); process.exit(0); };
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop); // the test closes stdin when it is done
process.stdin.resume();

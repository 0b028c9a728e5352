// replay.mjs replays the authorization decisions a test package's AWS
// emulator made through @cloud-copilot/iam-simulate, a second IAM evaluator
// (AGPL-3.0: run by the tests as its own node process, never linked into or
// shipped with Stowage), and reports every decision it would make otherwise.
//
//   node replay.mjs NODE_MODULES DECISIONS.jsonl
//
// DECISIONS.jsonl holds lines {"policy": ID, "doc": DOCUMENT} and
// {"principal", "account", "action", "resource", "context", "identity":
// [ID...], "resourcePolicy": ID, "decision": "Allowed" | "ImplicitlyDenied"
// | "ExplicitlyDenied"}. Output: one JSON line per disagreement, then
// {"replayed": N, "unvalidated": M}. A context key iam-simulate ignores (AWS would not give it
// for the request) is a disagreement too.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [modules, file] = process.argv.slice(2);
const require = createRequire(path.join(modules, 'replay.cjs'));
const { runSimulation, runUnsafeSimulation, typeForContextKey, isConditionKeyArray } = require('@cloud-copilot/iam-simulate');

const policies = new Map();
const decisions = [];
for (const line of readFileSync(file, 'utf8').split('\n')) {
  if (!line) continue;
  const rec = JSON.parse(line);
  if (rec.policy !== undefined) policies.set(rec.policy, JSON.parse(rec.doc));
  else decisions.push(rec);
}

// contextOf gives each key a string, or a list for a multi-valued key.
async function contextOf(ctx) {
  const out = {};
  for (const [k, v] of Object.entries(ctx)) {
    const type = await typeForContextKey(k);
    out[k] = type && isConditionKeyArray(type) ? v : v[0];
  }
  return out;
}

// replay answers one decision: null when iam-simulate agrees.
async function replay(d) {
  const sim = {
    request: { principal: d.principal, action: d.action, resource: { resource: d.resource, accountId: d.account },
      contextVariables: await contextOf(d.context) },
    identityPolicies: (d.identity ?? []).map((id, i) => ({ name: `p${i}`, policy: policies.get(id) })),
    serviceControlPolicies: [], resourceControlPolicies: [],
  };
  if (d.resourcePolicy !== undefined && d.resourcePolicy !== null) sim.resourcePolicy = policies.get(d.resourcePolicy);
  let res = await runSimulation(sim, {});
  // iam-simulate types no ARN whose account is empty, as AWS's public SSM
  // parameters' are (arn:aws:ssm:<region>::parameter/aws/service/...): those
  // it evaluates without its validation, and says how many.
  if (res.resultType === 'error' && res.errors?.message === 'no.resource.types' && d.resource.split(':')[4] === '') {
    unvalidated++;
    res = { resultType: 'single', overallResult: runUnsafeSimulation(sim, {}) };
  }
  let why;
  if (res.resultType === 'error') why = { errors: res.errors };
  else if (res.overallResult !== d.decision) why = { iamSimulate: res.overallResult };
  else if ((res.result?.ignoredContextKeys ?? []).length) why = { ignoredContextKeys: res.result.ignoredContextKeys };
  return why ? { ...why, emulator: d.decision, action: d.action, resource: d.resource, principal: d.principal, context: d.context } : null;
}

// A few at a time: iam-simulate reads iam-data's files as it goes.
let next = 0;
let unvalidated = 0;
const found = [];
async function worker() {
  while (next < decisions.length) {
    const d = decisions[next++];
    const why = await replay(d);
    if (why) found.push(why);
  }
}
await Promise.all(Array.from({ length: 8 }, worker));
for (const why of found) console.log(JSON.stringify(why));
console.log(JSON.stringify({ replayed: decisions.length, unvalidated }));

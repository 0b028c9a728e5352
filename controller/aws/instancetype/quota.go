package instancetype

import "strings"

// quotaClasses maps the letters of a family before its generation to its EC2
// vCPU quota class ("Running On-Demand P instances", "All Inf Spot Instance
// Requests", ...); families absent from it take their first letter, and the
// letters of the Standard quota (A, C, D, H, I, M, R, T, Z) share one class.
var quotaClasses = map[string]string{
	"inf": "inf", "trn": "trn", "dl": "dl", "hpc": "hpc", "vt": "g", "g": "g", "gr": "g",
	"p": "p", "x": "x", "f": "f", "u": "high-memory", "mac": "mac",
}

// QuotaClass returns the vCPU quota class of an instance type: every type of a
// class and capacity type draws on one per-account vCPU limit.
func QuotaClass(instanceType string) string {
	family, _, _ := strings.Cut(instanceType, ".")
	prefix, _, _ := strings.Cut(family, "-")
	category, _ := splitFamily(prefix)
	if c, ok := quotaClasses[category]; ok {
		return c
	}
	if category != "" && strings.ContainsRune("acdhimrtz", rune(category[0])) {
		return "standard"
	}
	return category
}

package awsemu

import (
	"encoding/xml"
	"net/http"
)

// stsAPIVersion tells STS query requests apart.
const stsAPIVersion = "2011-06-15"

// stsHandlers answer the STS actions, one line each.
var stsHandlers = map[string]func(e *Emulator, p params) (any, *APIError){
	"AssumeRoleWithWebIdentity": (*Emulator).assumeRoleWithWebIdentity,
}

func (e *Emulator) serveSTS(w http.ResponseWriter, req request) {
	h, ok := stsHandlers[req.action]
	if !ok {
		writeIAMError(w, http.StatusBadRequest, "InvalidAction", "unknown STS action "+req.action)
		return
	}
	out, apiErr := h(e, req.form)
	if apiErr != nil {
		status := http.StatusBadRequest
		if apiErr.Code == "AccessDenied" {
			status = http.StatusForbidden
		}
		writeIAMError(w, status, apiErr.Code, apiErr.Message)
		return
	}
	writeXML(w, http.StatusOK, iamResponse{XMLName: xml.Name{Local: req.action + "Response"},
		Xmlns: "https://sts.amazonaws.com/doc/2011-06-15/", Result: out, RequestID: "req-emulated"})
}

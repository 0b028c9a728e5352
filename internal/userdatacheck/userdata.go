package userdatacheck

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/stowage-dev/stowage/internal/nodeboot"
)

// Check reads user data (base64, as EC2 carries it) as a node of the family
// would, and checks each NodeConfig document against nodeadm's schema. It
// returns what the node read.
func Check(family, userData string) (*nodeboot.UserData, error) {
	raw, err := base64.StdEncoding.DecodeString(userData)
	if err != nil {
		return nil, fmt.Errorf("the user data is not base64: %w", err)
	}
	ud, err := nodeboot.Read(family, raw)
	if err != nil {
		return nil, err
	}
	var errs []error
	for i, doc := range ud.Documents {
		if err := CheckNodeConfig(doc); err != nil {
			errs = append(errs, fmt.Errorf("NodeConfig document %d: %w", i+1, err))
		}
	}
	return ud, errors.Join(errs...)
}

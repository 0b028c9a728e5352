package garbagecollection_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/internal/testenv"
)

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

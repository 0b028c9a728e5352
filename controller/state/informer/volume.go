package informer

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/stowage-dev/stowage/controller/state"
)

// pvcs, pvs and storageClasses feed the volume topology pods must follow.
func pvcs(c *state.Cluster) watch {
	return watch{&corev1.PersistentVolumeClaim{}, handler(c.UpdatePersistentVolumeClaim, c.DeletePersistentVolumeClaim)}
}

func pvs(c *state.Cluster) watch {
	return watch{&corev1.PersistentVolume{}, handler(c.UpdatePersistentVolume, c.DeletePersistentVolume)}
}

func storageClasses(c *state.Cluster) watch {
	return watch{&storagev1.StorageClass{}, handler(c.UpdateStorageClass, c.DeleteStorageClass)}
}

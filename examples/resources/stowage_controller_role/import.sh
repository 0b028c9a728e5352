# A role for IRSA is imported by its name; one for Pod Identity by its name
# and the cluster of its association.
terraform import stowage_controller_role.irsa StowageController-prod
terraform import stowage_controller_role.pod_identity StowageController-staging,staging

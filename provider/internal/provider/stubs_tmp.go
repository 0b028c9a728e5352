package provider

import "github.com/hashicorp/terraform-plugin-framework/datasource"

func newPlanDataSource() datasource.DataSource          { return nil }
func newInstanceTypesDataSource() datasource.DataSource { return nil }

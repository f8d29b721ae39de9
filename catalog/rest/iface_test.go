package rest_test

import (
	"github.com/compactd/compactd/catalog"
	"github.com/compactd/compactd/catalog/rest"
)

// The client is a catalog.Catalog (checked here: package rest must not
// import package catalog, which will import it).
var _ catalog.Catalog = (*rest.Catalog)(nil)

// The upstream format in Argo CD's own trees: v3.6.2's, v3.2.12's and v2.14.21's module source copied
// out of the module cache, our scripts overlaid, and their own util/lua tests run there (docs/upstream.md).
module github.com/analysis-health/analysis-health/test/upstream

go 1.26

require sigs.k8s.io/yaml v1.4.0

require (
	github.com/fxamacker/cbor/v2 v2.7.0 // indirect
	github.com/go-logr/logr v1.4.2 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/google/gofuzz v1.2.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	golang.org/x/net v0.39.0 // indirect
	golang.org/x/text v0.24.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	k8s.io/apimachinery v0.31.3 // indirect
	k8s.io/klog/v2 v2.130.1 // indirect
	k8s.io/utils v0.0.0-20240711033017-18e509b52bc8 // indirect
	layeh.com/gopher-json v0.0.0-20190114024228-97fed8db8427 // indirect
	sigs.k8s.io/json v0.0.0-20221116044647-bc3834ca7abd // indirect
	sigs.k8s.io/structured-merge-diff/v4 v4.4.4-0.20241211184406-7bf59b3d70ee // indirect
)

require (
	github.com/analysis-health/analysis-health v0.0.0
	github.com/analysis-health/analysis-health/test v0.0.0
)

// The project's own modules, from this checkout.
replace (
	github.com/analysis-health/analysis-health => ../..
	github.com/analysis-health/analysis-health/test => ..
)

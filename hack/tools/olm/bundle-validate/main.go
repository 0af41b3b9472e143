// bundle-validate checks an OLM bundle directory the way `operator-sdk bundle validate
// DIR --select-optional suite=operatorframework` does, with the same upstream libraries:
// operator-registry's bundle format and content checks (the directory layout,
// metadata/annotations.yaml against the manifests, the CSV, the CRDs, every other manifest
// of a kind OLM installs) and operator-framework/api's validators (the default bundle
// validators, then the operatorframework suite: OperatorHub metadata, good practices,
// APIs deprecated or removed at the target Kubernetes version, and object checks).
//
// The operator-sdk module itself is not served by the Go module proxy this project
// builds from, so this program stands in for its `bundle validate` command.
//
//	bundle-validate [--k8s-version 1.34] [--strict] BUNDLE_DIR
//
// Prints one line per finding ("ERROR ..." or "WARN ..."). Exit status 1 when any error
// was found (or any warning, with --strict), 2 on bad usage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	apivalidation "github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	registrybundle "github.com/operator-framework/operator-registry/pkg/lib/bundle"
	"github.com/sirupsen/logrus"
)

type report struct {
	errors, warnings int
}

func (r *report) add(level, source string, err error) {
	var verr registrybundle.ValidationError
	if errors.As(err, &verr) {
		for _, e := range verr.Errors {
			r.add(level, source, e)
		}
		return
	}
	if level == "ERROR" {
		r.errors++
	} else {
		r.warnings++
	}
	fmt.Printf("%-5s %s: %v\n", level, source, err)
}

func (r *report) addResults(source string, results []apierrors.ManifestResult) {
	for _, res := range results {
		for _, e := range res.Errors {
			r.add("ERROR", source+" "+res.Name, e)
		}
		for _, w := range res.Warnings {
			r.add("WARN", source+" "+res.Name, w)
		}
	}
}

func main() {
	k8sVersion := flag.String("k8s-version", "", "Kubernetes version the bundle targets (APIs removed by then are errors)")
	strict := flag.Bool("strict", false, "fail on warnings too")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: bundle-validate [--k8s-version X.Y] [--strict] BUNDLE_DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	r := &report{}

	logger := logrus.New()
	logger.SetOutput(io.Discard)
	val := registrybundle.NewImageValidator(nil, logrus.NewEntry(logger))

	// 1. Format: manifests/ and metadata/, annotations consistent with the manifests.
	if err := val.ValidateBundleFormat(dir); err != nil {
		r.add("ERROR", "format", err)
	}
	manifestsDir := filepath.Join(dir, registrybundle.ManifestsDir)
	// 2. Content: each manifest decodes, is of a kind a registry+v1 bundle may carry, the
	// CSV and CRDs pass their validators, and the bundle as a whole is consistent.
	if err := val.ValidateBundleContent(manifestsDir); err != nil {
		r.add("ERROR", "content", err)
	}

	bundle, err := apimanifests.GetBundleFromDir(manifestsDir)
	if err != nil {
		r.add("ERROR", "load", err)
		finish(r, *strict)
	}
	// 3. The default bundle validators on the loaded bundle.
	r.addResults("default", apivalidation.DefaultBundleValidators.Validate(bundle.ObjectsToValidate()...))

	// 4. The operatorframework suite, given every object and the optional values.
	objs := bundle.ObjectsToValidate()
	for _, o := range bundle.Objects {
		objs = append(objs, o)
	}
	optional := map[string]string{}
	if *k8sVersion != "" {
		optional["k8s-version"] = *k8sVersion
	}
	objs = append(objs, optional)
	suite := []struct {
		name string
		v    interface {
			Validate(...interface{}) []apierrors.ManifestResult
		}
	}{
		// What the deprecated "operatorhub" validator checked, split in three.
		{"operatorhub/v2", apivalidation.OperatorHubV2Validator},
		{"standardcapabilities", apivalidation.StandardCapabilitiesValidator},
		{"standardcategories", apivalidation.StandardCategoriesValidator},
		{"good-practices", apivalidation.GoodPracticesValidator},
		{"alpha-deprecated-apis", apivalidation.AlphaDeprecatedAPIsValidator},
		{"objects", apivalidation.ObjectValidator},
	}
	for _, s := range suite {
		r.addResults(s.name, s.v.Validate(objs...))
	}
	finish(r, *strict)
}

func finish(r *report, strict bool) {
	fmt.Printf("bundle-validate: %d error(s), %d warning(s)\n", r.errors, r.warnings)
	if r.errors > 0 || (strict && r.warnings > 0) {
		os.Exit(1)
	}
	os.Exit(0)
}

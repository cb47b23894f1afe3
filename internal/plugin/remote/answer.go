package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// reasons are the Status reasons of the Kubernetes API (metav1.StatusReason…): a remote server's reason
// is quoted only if it is one of them, for any other string is the server's text.
var reasons = map[metav1.StatusReason]bool{}

func init() {
	for _, r := range []metav1.StatusReason{metav1.StatusReasonUnauthorized, metav1.StatusReasonForbidden, metav1.StatusReasonNotFound,
		metav1.StatusReasonAlreadyExists, metav1.StatusReasonConflict, metav1.StatusReasonGone, metav1.StatusReasonInvalid,
		metav1.StatusReasonServerTimeout, metav1.StatusReasonTimeout, metav1.StatusReasonTooManyRequests,
		metav1.StatusReasonBadRequest, metav1.StatusReasonMethodNotAllowed, metav1.StatusReasonNotAcceptable,
		metav1.StatusReasonRequestEntityTooLarge, metav1.StatusReasonUnsupportedMediaType, metav1.StatusReasonInternalError,
		metav1.StatusReasonExpired, metav1.StatusReasonServiceUnavailable} {
		reasons[r] = true
	}
}

// StatusLine is an API error's HTTP status alone: "HTTP 403 Forbidden". The reason is the API's word
// for it, or else Go's text of the code: never what the server wrote in its message or reason.
func StatusLine(err error) string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return "no status"
	}
	s := st.Status()
	reason := string(s.Reason)
	if !reasons[s.Reason] {
		reason = http.StatusText(int(s.Code))
	}
	if reason == "" {
		return fmt.Sprintf("HTTP %d", s.Code)
	}
	return fmt.Sprintf("HTTP %d %s", s.Code, reason)
}

// ErrNotAnObject is the error of a get answered with something else than one object (a list): client-go's
// dynamic client would panic on it (k8s.io/client-go/dynamic/simple.go Get casts the decoded answer).
var ErrNotAnObject = errors.New("its answer to a get is not one object")

// objectsOnly is the client's dynamic.Interface with two corrections of client-go's, for the gets and
// lists the plugin makes (it watches too, unchanged):
//   - a get answered with a list is an error, not client-go's panic;
//   - an error once the request's context is done is that context's error too (errors.Is), whatever the
//     body read made of it: a body cut at the deadline can reach client-go as a clean end of a truncated
//     answer (net/http, under load), which would say the server's answer was not JSON when the server
//     was merely too slow.
type objectsOnly struct{ dynamic.Interface }

func (c objectsOnly) Resource(r schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return namespaceable{c.Interface.Resource(r)}
}

type namespaceable struct {
	dynamic.NamespaceableResourceInterface
}

func (n namespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return resource{n.NamespaceableResourceInterface.Namespace(ns)}
}

func (n namespaceable) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return get(n.NamespaceableResourceInterface, ctx, name, o, sub)
}

func (n namespaceable) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := n.NamespaceableResourceInterface.List(ctx, o)
	return l, inTime(ctx, err)
}

type resource struct{ dynamic.ResourceInterface }

func (r resource) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return get(r.ResourceInterface, ctx, name, o, sub)
}

func (r resource) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := r.ResourceInterface.List(ctx, o)
	return l, inTime(ctx, err)
}

func get(r dynamic.ResourceInterface, ctx context.Context, name string, o metav1.GetOptions, sub []string) (obj *unstructured.Unstructured, err error) {
	defer func() {
		if recover() != nil {
			obj, err = nil, ErrNotAnObject
		}
		err = inTime(ctx, err)
	}()
	return r.Get(ctx, name, o, sub...)
}

// inTime is err, and also the context's error if the context is done.
func inTime(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w: %w", ctx.Err(), err)
}

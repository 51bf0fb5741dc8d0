package inc

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fared/fared/api"
	"github.com/fared/fared/api/client"
	"github.com/fared/fared/inc/manager"
)

// DELETE /v1/inc/groups/NAME on the daemon's socket: an unknown group is
// 404 and a name no group can have 400, each with the reason; a node that
// is no manager says so. (The dismantle itself: inc/manager's tests.)
func TestDismantleAPI(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	sock := filepath.Join(t.TempDir(), "fared.sock")
	srv, err := api.Listen(sock, log, []string{"inc"}, api.Perm{Group: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := &module{cfg: &Config{}, mgr: manager.New(manager.Config{}, log, nil)}
	go m.mgr.Run(ctx)
	srv.Mount("inc", m.Routes)
	c := client.New(sock)
	for _, tc := range []struct {
		path   string
		status int
		reason string
	}{
		{"/inc/groups/nosuch", 404, `no such group: "nosuch"`},
		{"/inc/groups/a%20b", 400, "not a group name"},
		{"/inc/groups/" + strings.Repeat("x", manager.MaxGroupName+1), 400, "not a group name"},
	} {
		_, err := c.Delete(ctx, tc.path)
		var ae *client.Error
		if !errors.As(err, &ae) || ae.Status != tc.status || !strings.Contains(ae.Reason, tc.reason) {
			t.Errorf("DELETE %s: %v, want %d %q", tc.path, err, tc.status, tc.reason)
		}
	}
	srv.Mount("inc", (&module{cfg: &Config{}}).Routes)
	if _, err := c.Delete(ctx, "/inc/groups/g"); err == nil || !strings.Contains(err.Error(), "not an INC manager") {
		t.Errorf("on a switch-only node: %v", err)
	}
}

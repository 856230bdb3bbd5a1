package file

import "testing"

// TestName is engine's former TestPartitionName: partitions are named
// after their first file, relative to the config file's folder.
func TestName(t *testing.T) {
	tests := []struct{ path, base, want string }{
		{"/etc/tx/p0.jsonl", "/etc/tx", "p0.jsonl"},
		{"/etc/tx/sub/../p1.jsonl", "/etc/tx", "p1.jsonl"},
		{"/var/log/p0.jsonl", "/etc/tx", "/var/log/p0.jsonl"},
		{"/etc/tx/p0.jsonl", "", "/etc/tx/p0.jsonl"},
		{"-", "/etc/tx", "-"},
		{"/etc/txsink/p.jsonl", "/etc/tx", "/etc/txsink/p.jsonl"},
	}
	for _, tc := range tests {
		if got := Name(tc.path, tc.base); got != tc.want {
			t.Errorf("Name(%q, %q) = %q, want %q", tc.path, tc.base, got, tc.want)
		}
	}
}

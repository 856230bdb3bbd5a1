package kafka_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txsink/txsink/source"
	"github.com/txsink/txsink/source/kafka"
)

func TestParsePartition(t *testing.T) {
	for _, c := range []struct {
		name  string
		topic string
		part  int32
		ok    bool
	}{
		{"orders/3", "orders", 3, true},
		{"dbserver1.inventory.orders/0", "dbserver1.inventory.orders", 0, true},
		{kafka.PartitionName("a-b_c", 2147483647), "a-b_c", 2147483647, true},
		{"p0.jsonl", "", 0, false},
		{"dir/p0.jsonl", "", 0, false},
		{"/3", "", 0, false},
		{"orders/-1", "", 0, false},
		{"orders/2147483648", "", 0, false},
		{"bad topic/1", "", 0, false},
	} {
		topic, part, ok := kafka.ParsePartition(c.name)
		if topic != c.topic || part != c.part || ok != c.ok {
			t.Errorf("ParsePartition(%q) = %q, %d, %t; want %q, %d, %t", c.name, topic, part, ok, c.topic, c.part, c.ok)
		}
	}
}

// group is a kafka.Group that resumes from fixed positions and records
// what it was told.
type group struct {
	stored map[string]int64
	mu     sync.Mutex
	got    []string
}

func (g *group) Assigned(_ context.Context, parts []string) (map[string]int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.got = append(g.got, parts...)
	return g.stored, nil
}
func (g *group) Revoked(context.Context, []string) {}
func (g *group) Lost(context.Context, []string)    {}

// selfSigned writes a CA-less self-signed certificate for 127.0.0.1 to
// dir and returns the server's TLS config and the certificate's path.
func selfSigned(t *testing.T, dir string) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, path
}

// cluster starts kfake with topic "t" of 2 partitions and returns its
// brokers; opts add to the cluster's options.
func cluster(t *testing.T, opts ...kfake.Opt) []string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(2, "t")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func produce(t *testing.T, brokers []string, extra []kgo.Opt, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner())}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func rec(part int32, v string) *kgo.Record {
	return &kgo.Record{Topic: "t", Partition: part, Value: []byte(v)}
}

// pollUntil polls c until want records have come, and returns them as
// "partition:seq=value".
func pollUntil(t *testing.T, c *kafka.Consumer, want int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []string
	for len(got) < want {
		b, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("Poll after %d records (%v): %v", len(got), got, err)
		}
		for _, r := range b.Records {
			got = append(got, r.Pos.String()+"="+string(r.Data))
			if r.Pos.Offset != r.Pos.Seq+1 {
				t.Errorf("%s: offset %d, want the next offset %d", r.Pos, r.Pos.Offset, r.Pos.Seq+1)
			}
			if end := b.Ends[r.Pos.Partition]; end < r.Pos.Offset {
				t.Errorf("%s: high watermark %d below the record", r.Pos, end)
			}
		}
		c.Release()
	}
	return got
}

// TestConsumerResumesFromTheGroup connects over TLS with SCRAM, and checks
// that a partition the Group holds a position for resumes there while
// the other starts at its start policy's end.
func TestConsumerResumesFromTheGroup(t *testing.T) {
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"} {
		t.Run(mech, func(t *testing.T) {
			dir := t.TempDir()
			srvTLS, ca := selfSigned(t, dir)
			brokers := cluster(t, kfake.EnableSASL(), kfake.Superuser(mech, "txsink", "s3cret"), kfake.TLS(srvTLS))
			pool := x509.NewCertPool()
			pemBytes, _ := os.ReadFile(ca)
			pool.AppendCertsFromPEM(pemBytes)
			src := &kafka.Config{Brokers: brokers, Topics: []string{"t"}, Group: "g", TLSCA: ca,
				SASLMechanism: mech, SASLUser: "txsink", SASLPassword: "s3cret"}
			clientAuth := kgoAuth(t, src, pool)
			produce(t, brokers, clientAuth, rec(0, "a0"), rec(0, "a1"), rec(0, "a2"), rec(1, "b0"))
			g := &group{stored: map[string]int64{"t/0": 2}}
			c, err := kafka.Open(src, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got := strings.Join(sorted(pollUntil(t, c, 2)), " ")
			if want := "t/0:2=a2 t/1:0=b0"; got != want {
				t.Fatalf("polled %s, want %s", got, want)
			}
		})
	}
}

// kgoAuth builds the producer's TLS and SASL options the way the consumer
// builds its own from src.
func kgoAuth(t *testing.T, src *kafka.Config, pool *x509.CertPool) []kgo.Opt {
	t.Helper()
	return []kgo.Opt{kgo.DialTLSConfig(&tls.Config{RootCAs: pool}), kgo.SASL(kafka.Mechanism(src))}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestStartLatest: with no stored position, start latest skips what the
// topic held before the group joined.
func TestStartLatest(t *testing.T) {
	brokers := cluster(t)
	produce(t, brokers, nil, rec(0, "old0"), rec(1, "old1"))
	g := &group{}
	c, err := kafka.Open(&kafka.Config{Brokers: brokers, Topics: []string{"t"}, Group: "g", Start: kafka.StartLatest}, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The first Poll joins the group; records produced once both
	// partitions are assigned are the first ones seen.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	for assigned := false; !assigned; {
		b, err := c.Poll(ctx)
		if err == nil && len(b.Records) > 0 {
			t.Fatalf("polled %v before anything new was produced", b.Records)
		}
		c.Release()
		g.mu.Lock()
		assigned = len(g.got) == 2
		g.mu.Unlock()
		if ctx.Err() != nil {
			cancel()
			ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		}
	}
	cancel()
	produce(t, brokers, nil, rec(0, "new0"))
	if got := pollUntil(t, c, 1); len(got) != 1 || got[0] != "t/0:1=new0" {
		t.Fatalf("polled %v, want only t/0:1=new0", got)
	}
}

// TestRecordTooLarge: a record over max-record-bytes stops the source with
// an error naming its position.
func TestRecordTooLarge(t *testing.T) {
	brokers := cluster(t)
	produce(t, brokers, nil, rec(0, "ok"), rec(0, strings.Repeat("x", 100)))
	c, err := kafka.Open(&kafka.Config{Brokers: brokers, Topics: []string{"t"}, Group: "g", MaxRecordBytes: 50}, &group{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		b, err := c.Poll(ctx)
		if err != nil {
			if !errors.Is(err, kafka.ErrRecordTooLarge) || !strings.Contains(err.Error(), "t/0:1") {
				t.Fatalf("Poll: %v, want ErrRecordTooLarge naming t/0:1", err)
			}
			return
		}
		c.Release()
		if len(b.Records) > 0 {
			t.Fatalf("polled %d records of a batch holding one too large", len(b.Records))
		}
	}
}

// TestTopicRegex reads the topics whose whole name matches: "at" contains
// a match of t.* but is not one.
func TestTopicRegex(t *testing.T) {
	brokers := cluster(t, kfake.SeedTopics(1, "t2", "other", "at"))
	mk := func(topic, v string) *kgo.Record { return &kgo.Record{Topic: topic, Value: []byte(v)} }
	produce(t, brokers, nil, mk("at", "no"), mk("other", "no"), mk("t2", "yes"), rec(1, "yes"))
	c, err := kafka.Open(&kafka.Config{Brokers: brokers, TopicRegex: "t.*", Group: "g"}, &group{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := sorted(pollUntil(t, c, 2))
	produce(t, brokers, nil, rec(0, "last"))
	got = append(got, pollUntil(t, c, 1)...)
	if want := "t/1:0=yes t2/0:0=yes t/0:0=last"; strings.Join(got, " ") != want {
		t.Fatalf("polled %v, want %s", got, want)
	}
}

// TestSample reads partitions from the given positions, or from their
// start, without a group, and reports missing topics.
func TestSample(t *testing.T) {
	brokers := cluster(t)
	produce(t, brokers, nil, rec(0, "a0"), rec(0, "a1"), rec(0, "a2"), rec(1, "b0"))
	var got []string
	src := &kafka.Config{Brokers: brokers, Topics: []string{"t", "nope"}, Group: "g"}
	topics, err := kafka.Sample(context.Background(), src, map[string]int64{"t/0": 1}, 10, func(r source.Record) error {
		got = append(got, r.Pos.String()+"="+string(r.Data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "t/0:1=a1 t/0:2=a2 t/1:0=b0"; strings.Join(sorted(got), " ") != want {
		t.Errorf("sampled %v, want %s", got, want)
	}
	if strings.Join(topics.Partitions, " ") != "t/0 t/1" || strings.Join(topics.Missing, " ") != "nope" {
		t.Errorf("topics %+v", topics)
	}
}

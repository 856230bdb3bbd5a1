package testdb

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy relays TCP connections to a server and can take it away: a test
// puts one between txsink and a shared test server to make the server
// unreachable and reachable again, as a network outage or a failover
// does, without stopping or reconfiguring the server other tests use.
type Proxy struct {
	target string
	ln     net.Listener

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]bool // both ends of every relayed connection
	wg    sync.WaitGroup
}

// NewProxy relays connections to target (host:port) from a free loopback
// port, until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		ln.Close()
		p.Down()
		p.wg.Wait()
	})
	p.wg.Add(1)
	go p.accept()
	return p
}

// Proxied returns a proxy to d's server (MariaDB/MySQL or PostgreSQL),
// and d's URL through it: a pipeline with that URL as its target reaches
// d only while the proxy is up.
func (d *DB) Proxied(t testing.TB) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(d.URL)
	if err != nil || u.Host == "" {
		t.Fatalf("testdb: %s has no server address to proxy (%v)", redact(d.URL), err)
	}
	p := NewProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	return p, u.String()
}

// Down closes every relayed connection, and every connection made from
// now on as soon as it is accepted, until Up: a client meets a broken
// connection, then a server that hangs up at once.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Up relays new connections again.
func (p *Proxy) Up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.down {
			// Down was called while dialling.
			p.mu.Unlock()
			c.Close()
			s.Close()
			continue
		}
		p.conns[c], p.conns[s] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.relay(c, s)
		go p.relay(s, c)
	}
}

// relay copies from src to dst until either end closes, then closes both.
func (p *Proxy) relay(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

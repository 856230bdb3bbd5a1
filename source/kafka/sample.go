package kafka

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txsink/txsink/changelog"
	"github.com/txsink/txsink/source"
)

// Topics is what the brokers say of a source's topics.
type Topics struct {
	// Partitions lists every partition read (data topics and the
	// transaction topic), sorted.
	Partitions []string
	// Missing lists configured topics the brokers do not have.
	Missing []string
	// TransactionPartitions is the transaction topic's partition count
	// (0 when there is none or it is missing).
	TransactionPartitions int
}

// Sample reads up to n records of every partition of src's topics, without
// joining the consumer group (nothing is committed, nobody rebalances). A
// partition starts at from[partition] when present (the target's
// progress: what a run reads next), else where source.start says; it
// stops at n records or at the partition's end. fn gets each record, in
// order within its partition. An error means the brokers could not be
// asked at all (unreachable, refused credentials) or ctx ended.
func Sample(ctx context.Context, src *Config, from map[string]int64, n int, fn func(source.Record) error) (*Topics, error) {
	base, err := clientOpts(src)
	if err != nil {
		return nil, err
	}
	base = append(base, kgo.ClientID("txsink-check"))
	meta, err := kgo.NewClient(base...)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	defer meta.Close()
	info, parts, err := describe(ctx, meta, src)
	if err != nil {
		return nil, err
	}
	if n <= 0 || len(parts) == 0 {
		return info, nil
	}
	ends, err := listOffsets(ctx, meta, parts, -1)
	if err != nil {
		return nil, err
	}
	starts, err := listOffsets(ctx, meta, parts, -2)
	if err != nil {
		return nil, err
	}
	offsets := map[string]map[int32]kgo.Offset{}
	want := map[string]int64{} // partition -> offset to stop before
	for t, ps := range parts {
		for _, p := range ps {
			name := PartitionName(t, p)
			end := ends[name]
			start, first := kgo.NewOffset().AtStart(), starts[name]
			switch at, ok := from[name]; {
			case ok && at > 0:
				start, first = kgo.NewOffset().At(at), max(at, first)
			case src.Start == StartLatest:
				continue // only what comes after the run starts
			}
			if first >= end {
				continue // nothing to read
			}
			if offsets[t] == nil {
				offsets[t] = map[int32]kgo.Offset{}
			}
			offsets[t][p] = start
			want[name] = end
		}
	}
	if len(offsets) == 0 {
		return info, nil
	}
	cl, err := kgo.NewClient(append(base, kgo.ConsumePartitions(offsets), kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	defer cl.Close()
	got := map[string]int{}
	for len(want) > 0 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return info, err
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("kafka source: %s: %w", PartitionName(t, p), err)
			}
		})
		if ferr != nil {
			return info, ferr
		}
		var cbErr error
		fetches.EachRecord(func(r *kgo.Record) {
			name := PartitionName(r.Topic, r.Partition)
			if _, open := want[name]; !open || cbErr != nil {
				return
			}
			got[name]++
			cbErr = fn(source.Record{Data: r.Value, Key: r.Key, Pos: changelog.Position{Partition: name, Offset: r.Offset + 1, Seq: r.Offset}})
			if got[name] >= n || r.Offset+1 >= want[name] {
				delete(want, name)
			}
		})
		if cbErr != nil {
			return info, cbErr
		}
	}
	return info, nil
}

// clientOpts are the connection options of src: brokers, TLS, SASL.
func clientOpts(src *Config) ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(src.Brokers...)}
	tlsCfg, err := tlsConfig(src)
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		opts = append(opts, kgo.DialTLSConfig(tlsCfg))
	}
	if m := Mechanism(src); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// describe asks the brokers for src's topics and their partitions.
func describe(ctx context.Context, cl *kgo.Client, src *Config) (*Topics, map[string][]int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	var names []string
	if src.TopicRegex == "" {
		names = append(slices.Clone(src.Topics), src.TransactionTopic)
		for _, t := range names {
			if t == "" {
				continue
			}
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	} // else nil Topics: all of them
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, nil, fmt.Errorf("kafka source: asking brokers %s for the topics: %w", strings.Join(src.Brokers, ","), err)
	}
	var re *regexp.Regexp
	if src.TopicRegex != "" {
		re = regexp.MustCompile("^(?:" + src.TopicRegex + ")$")
	}
	info := &Topics{}
	parts := map[string][]int32{}
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		if re != nil && !re.MatchString(name) && name != src.TransactionTopic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if err == kerr.UnknownTopicOrPartition {
				info.Missing = append(info.Missing, name)
				continue
			}
			return nil, nil, fmt.Errorf("kafka source: topic %s: %w", name, err)
		}
		for _, p := range t.Partitions {
			parts[name] = append(parts[name], p.Partition)
			info.Partitions = append(info.Partitions, PartitionName(name, p.Partition))
		}
		if name == src.TransactionTopic {
			info.TransactionPartitions = len(t.Partitions)
		}
	}
	if re != nil && src.TransactionTopic != "" && info.TransactionPartitions == 0 && !slices.Contains(info.Missing, src.TransactionTopic) {
		info.Missing = append(info.Missing, src.TransactionTopic)
	}
	slices.Sort(info.Partitions)
	slices.Sort(info.Missing)
	return info, parts, nil
}

// listOffsets returns each partition's high watermark (at -1) or log
// start offset (at -2).
func listOffsets(ctx context.Context, cl *kgo.Client, parts map[string][]int32, at int64) (map[string]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = 1 // read committed, as the run reads
	for t, ps := range parts {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = t
		for _, p := range ps {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp = p, at
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("kafka source: listing the partitions' offsets: %w", err)
	}
	out := map[string]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("kafka source: offsets of %s: %w", PartitionName(t.Topic, p.Partition), err)
			}
			out[PartitionName(t.Topic, p.Partition)] = p.Offset
		}
	}
	return out, nil
}

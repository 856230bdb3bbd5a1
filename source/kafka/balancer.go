package kafka

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// singleOwner is a group balancer that gives every partition to one
// member: the one that owned the most before the rebalance, else the first.
// The other members stand by and take over when it leaves or dies.
//
// Transactions joined across topics need it: a transaction's events are
// spread over the data topics' partitions and its END is in the
// transaction topic, so one process must read them all.
type singleOwner struct{}

func (singleOwner) ProtocolName() string { return "txsink-single-owner" }
func (singleOwner) IsCooperative() bool  { return false }

func (singleOwner) JoinGroupMetadata(interests []string, current map[string][]int32, generation int32) []byte {
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Version = 3
	meta.Topics = interests
	meta.Generation = generation
	topics := make([]string, 0, len(current))
	for t := range current {
		topics = append(topics, t)
	}
	slices.Sort(topics) // a stable encoding: Kafka compares it to decide whether to rebalance
	for _, t := range topics {
		op := kmsg.NewConsumerMemberMetadataOwnedPartition()
		op.Topic, op.Partitions = t, current[t]
		meta.OwnedPartitions = append(meta.OwnedPartitions, op)
	}
	return meta.AppendTo(nil)
}

func (singleOwner) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	return kgo.ParseConsumerSyncAssignment(assignment)
}

func (s singleOwner) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	b, err := kgo.NewConsumerBalancer(s, members)
	if err != nil {
		return nil, nil, err
	}
	return b, b.MemberTopics(), nil
}

// Balance implements kgo.ConsumerBalancerBalance.
func (singleOwner) Balance(b *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	var owner *kmsg.JoinGroupResponseMember
	most := -1
	b.EachMember(func(m *kmsg.JoinGroupResponseMember, meta *kmsg.ConsumerMemberMetadata) {
		n := 0
		for _, op := range meta.OwnedPartitions {
			n += len(op.Partitions)
		}
		if n > most {
			owner, most = m, n
		}
	})
	plan := b.NewPlan()
	if owner == nil {
		return plan
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		for p := range topics[t] {
			plan.AddPartition(owner, t, p)
		}
	}
	return plan
}

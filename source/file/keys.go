package file

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/txsink/txsink/source"
)

// Summary implements source.Keyed.
func (Driver) Summary() string { return "newline-delimited records in files" }

// Keys implements source.Keyed: the keys of Config, documented here once
// (docs/config.md prints them).
func (Driver) Keys() []source.Key {
	return []source.Key{{
		Name: "paths", Type: source.KeyStrings, Path: true,
		Want: "a list of files read one after another, such as [day1.jsonl, day2.jsonl]", DefaultDoc: "none",
		Doc: "The files to read, as ONE partition: one file after another, in the order listed, as one ordered " +
			"lane (so one key's changes may be spread over them). An entry may be a glob (`logs/*.jsonl`), " +
			"whose files are read in name order. `-` is standard input, and must be the only entry; it resumes " +
			"from nothing: every run reads it from its first record. A file resumes after the last committed " +
			"record, once its stored fingerprint matches (a replaced or truncated file is refused); " +
			"`txsink reset --config FILE` forgets the progress to start over. Relative " +
			"paths are relative to the config file's directory. A single string is a list of one. Set this or " +
			"`partitions`, not both.",
	}, {
		Name: "partitions", Type: source.KeyStringLists, Path: true,
		Want: "a list of partitions, each a file, a glob or a list of files, such as [[day1.jsonl, day2.jsonl], [other.jsonl]]", DefaultDoc: "none",
		Doc: "Several partitions, read concurrently: each entry is one partition, an ordered sequence of files " +
			"(a file, a glob read in name order, or a list of them, read one after another). Order is kept " +
			"within a partition only, so one key's changes must stay in one partition: a key that appears in two " +
			"stops the pipeline with an error naming both. `-` (standard input) must be a partition of its own. " +
			"Set this or `paths`, not both.",
	}, {
		Name: "follow", Type: source.KeyBool,
		Want: "true or false",
		Doc: "Wait for the files to grow, like `tail -f`, instead of stopping at their end. " +
			"Standard input always ends when its writer closes it.",
	}}
}

// Validate implements source.Validator: paths or partitions, entries that
// are not empty, standard input alone in its partition and once, no path
// twice. Files that are the same under other spellings (links) are found
// when the pipeline opens them.
func (Driver) Validate(settings source.Settings, _ source.Pipeline) []source.Problem {
	var c Config
	if err := source.Decode(settings, &c); err != nil {
		return []source.Problem{{Msg: err.Error()}}
	}
	var probs []source.Problem
	add := func(key, msg string) { probs = append(probs, source.Problem{Key: key, Msg: msg}) }
	switch {
	case len(c.Paths) > 0 && len(c.Partitions) > 0:
		add("partitions", "is set with source.paths; set one: paths for one partition (files read one after another), partitions for several read concurrently")
		return probs
	case len(c.Paths) == 0 && len(c.Partitions) == 0:
		return []source.Problem{{Key: "paths", Absent: true,
			Msg: "set it to a list of files read one after another, such as [day1.jsonl, day2.jsonl] (or set source.partitions)"}}
	}
	stdin := ""
	seen := map[string]string{}
	for i, part := range c.PartitionPaths() {
		pkey := "paths"
		if len(c.Partitions) > 0 {
			pkey = fmt.Sprintf("partitions[%d]", i)
			if len(part) == 0 {
				add(pkey, "empty; list the partition's files, or remove the entry")
			}
		}
		for j, p := range part {
			key := fmt.Sprintf("%s[%d]", pkey, j)
			switch {
			case strings.TrimSpace(p) == "":
				add(key, "empty; write a file path, or - for standard input")
			case p == "-":
				switch {
				case stdin != "":
					add(key, fmt.Sprintf("standard input (-) is listed again (first as source.%s); it can be read only once", stdin))
				case len(part) > 1:
					add(key, "standard input (-) is in a list of files; a stream cannot be one of a sequence: make it a partition of its own")
				default:
					stdin = key
				}
			default:
				cl := filepath.Clean(p)
				if first, dup := seen[cl]; dup {
					add(key, fmt.Sprintf("names the same file as source.%s; list each file once", first))
				} else {
					seen[cl] = key
				}
			}
		}
	}
	return probs
}

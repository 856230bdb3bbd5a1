package cputime

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// clockTick is the unit of /proc/PID/stat's times: USER_HZ, 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// Tree returns the CPU time that process pid and its children have used
// so far: every thread of the process, its children that ended and were
// waited for, and its running children (not their own children). That is
// a database server's CPU time, both for one process of many threads
// (MariaDB, MySQL) and for a postmaster with a process per connection
// (PostgreSQL). ok is false when the process is gone or unreadable. The
// figure moves in steps of 10 ms.
//
// A child reaped while its siblings are read would count neither as
// running nor among the ended (its time reaches the parent's cutime after
// that was read), and two readings would differ by less than nothing: the
// parent is read again after its children, and the whole reading repeated
// while a child was reaped in between.
func Tree(pid int) (cpu time.Duration, ok bool) {
	var ticks int64
	for attempt := 0; attempt < 5; attempt++ {
		st, ok := readStat(pid)
		if !ok {
			return 0, false
		}
		ticks = st.utime + st.stime + st.cutime + st.cstime
		for _, child := range processes() {
			if child == pid {
				continue
			}
			if cs, ok := readStat(child); ok && cs.ppid == pid {
				ticks += cs.utime + cs.stime
			}
		}
		after, ok := readStat(pid)
		if !ok {
			return 0, false
		}
		if after.cutime == st.cutime && after.cstime == st.cstime {
			break
		}
	}
	return time.Duration(ticks) * clockTick, true
}

// Parent returns the parent of process pid (ok false when unknown).
func Parent(pid int) (int, bool) {
	st, ok := readStat(pid)
	return st.ppid, ok
}

// Command returns the command name of process pid, as /proc/PID/comm has
// it ("" when unknown).
func Command(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// Find returns the only process of this host whose command name is one
// of names (ok false when there is none, or more than one).
func Find(names ...string) (pid int, ok bool) {
	for _, p := range processes() {
		c := Command(p)
		for _, n := range names {
			if c == n {
				if ok {
					return 0, false
				}
				pid, ok = p, true
			}
		}
	}
	return pid, ok
}

// processes returns the IDs of the host's processes, as /proc lists them
// now.
func processes() []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	pids := make([]int, 0, len(dirs))
	for _, d := range dirs {
		if p, err := strconv.Atoi(filepath.Base(d)); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}

// stat holds the fields of /proc/PID/stat that Tree reads.
type stat struct {
	ppid                         int
	utime, stime, cutime, cstime int64
}

func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	// The command name, in parentheses, may hold spaces and parentheses
	// itself: the fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime to cstime 14 to 17.
	if len(f) < 15 {
		return stat{}, false
	}
	var st stat
	var err1, err2, err3, err4, err5 error
	st.ppid, err1 = strconv.Atoi(string(f[1]))
	st.utime, err2 = strconv.ParseInt(string(f[11]), 10, 64)
	st.stime, err3 = strconv.ParseInt(string(f[12]), 10, 64)
	st.cutime, err4 = strconv.ParseInt(string(f[13]), 10, 64)
	st.cstime, err5 = strconv.ParseInt(string(f[14]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
		return stat{}, false
	}
	return st, true
}

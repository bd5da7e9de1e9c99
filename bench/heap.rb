# bench/heap.rb - the benchmarked Ruby VM: a heap built on the fly, and an
# application thread that ticks, to measure how long the VM stops it.
#
#   ruby [-I build/ruby -rvmheap_agent] bench/heap.rb ITEMS
#
# Builds ITEMS objects of class BenchItem, each holding a String and a Hash
# (3 objects per item).  Then the main thread plays the application: it
# wakes every TICK seconds and keeps the largest gap between two wake-ups.
# A side thread answers one command per line on stdin with one line on
# stdout (bench/run.rb speaks this):
#
#   grow N        add N more items, then GC;     reply "ok ITEMS SECONDS"
#   gc            full GC;                       reply "ok"
#   cpu           CPU seconds of this process and of its reaped children;
#                                                reply "ok SELF CHILDREN"
#   reset         start a ticker window;         reply "ok"
#   gap           largest gap since reset, ms;   reply "ok MS TICKS"
#   dump_all PATH ObjectSpace.dump_all to PATH, run on the application
#                 thread (as a signal trap or an admin endpoint runs it);
#                                                reply "ok SECONDS BYTES"
#   dump_all_side PATH  the same, run on the side thread while the
#                 application thread keeps ticking
#   count         live objects (ObjectSpace);    reply "ok N"
#   quit          exit
#
# Whatever stops the application thread shows up as one long gap: a
# dump_all on it, an in-process vmheap dump (the agent stops the mutators),
# the fork of a fork-mode dump.  The ticker allocates nothing in steady
# state (the clock reads are Integers), so it causes no GC of its own.
require "objspace"

class BenchItem
	def initialize(i)
		@name = "item-#{i}"
		@attrs = { id: i }
	end
end

TICK = 0.001

$items = []
$ticker_last = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
$ticker_max = 0
$ticker_ticks = 0
$jobs = Queue.new      # work the application thread runs between ticks
$done = Queue.new      # their results

def now_ns
	Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

def grow(n)
	start = now_ns
	base = $items.size
	n.times { |i| $items << BenchItem.new(base + i) }
	GC.start
	(now_ns - start) / 1e9
end

def dump_all(path)
	start = now_ns
	File.open(path, "w") { |f| ObjectSpace.dump_all(output: f) }
	secs = (now_ns - start) / 1e9
	"ok #{format('%.4f', secs)} #{File.size(path)}"
end

def reply(line)
	$stdout.write("#{line}\n")
	$stdout.flush
end

def command(line)
	cmd, arg = line.split(" ", 2)
	arg = arg&.strip
	case cmd
	when "grow"
		secs = grow(Integer(arg))
		"ok #{$items.size} #{format('%.3f', secs)}"
	when "gc"
		GC.start
		"ok"
	when "reset"
		$ticker_last = now_ns
		$ticker_max = 0
		$ticker_ticks = 0
		"ok"
	when "gap"
		# Count the gap still open at this moment too.
		open_gap = now_ns - $ticker_last
		max = [$ticker_max, open_gap].max
		"ok #{format('%.3f', max / 1e6)} #{$ticker_ticks}"
	when "dump_all"
		# On the application thread, as a signal trap or an admin
		# endpoint would run it.
		$jobs.push(-> { dump_all(arg) })
		$done.pop
	when "dump_all_side"
		# On this side thread, while the application thread runs.
		dump_all(arg)
	when "cpu"
		# CPU seconds: this process's, and its reaped children's (the
		# agent reaps its fork-mode dump children).
		t = Process.times
		"ok #{format('%.4f', t.utime + t.stime)} #{format('%.4f', t.cutime + t.cstime)}"
	when "count"
		c = ObjectSpace.count_objects
		"ok #{c[:TOTAL] - c[:FREE]}"
	else
		"error unknown command #{cmd.inspect}"
	end
end

items = Integer(ARGV[0] || 1_000_000)
secs = grow(items)

# The command thread: one line in, one line out.
Thread.new do
	reply("ready #{Process.pid} #{$items.size} #{format('%.3f', secs)}")
	while (line = $stdin.gets)
		break if line.strip == "quit"
		reply(command(line))
	end
	$jobs.push(:quit)
end

# The application thread (main): tick, and run queued work in between.
loop do
	sleep TICK
	t = now_ns
	gap = t - $ticker_last
	$ticker_max = gap if gap > $ticker_max
	$ticker_last = t
	$ticker_ticks += 1
	next if $jobs.empty?
	job = $jobs.pop
	break if job == :quit
	$done.push(job.call)
end

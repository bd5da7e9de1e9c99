# bench/alloc_trace.rb - what allocation tracing costs an allocation loop:
# the same loop untraced, with vmheap's tracer (set
# config.trace.allocations true, through vmheap-console against this very
# process) and with ObjectSpace.trace_object_allocations_start, in one
# process, in turn, RUNS times; prints the median CPU seconds of each
# (the process's CPU clock: other processes on a loaded machine move it
# less than the wall clock) and their ratios to the untraced loop, as a
# Markdown table, and the wall times of every run.
#
#   ruby -I BUILD/ruby -rvmheap_agent bench/alloc_trace.rb CONSOLE [N] [RUNS]
#
# The loop makes an object and a string per step from two lines of one
# method (GC.stat counts the allocations), and keeps at most 1000 of them,
# so that the GC frees as fast as the loop allocates: the tracer pays for
# NEWOBJ and FREEOBJ both.
require "objspace"

console = ARGV[0] or abort "usage: alloc_trace.rb CONSOLE [N] [RUNS]"
n = Integer(ARGV[1] || 1_000_000)
runs = Integer(ARGV[2] || 3)

class BenchItem
	def initialize(i)
		@i = i
	end
end

def work(n)
	keep = []
	i = 0
	while i < n
		keep << BenchItem.new(i)
		keep << "item #{i}"
		keep.clear if keep.size > 1000
		i += 1
	end
end

# [CPU seconds, wall seconds] of the block
def seconds
	c0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
	t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
	yield
	[Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - c0,
	 Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0]
end

def agent(console, command)
	out = IO.popen([console, "-p", Process.pid.to_s, "-e", command],
		       err: [:child, :out], &:read)
	$?.success? or abort "vmheap-console -e '#{command}': #{out}"
	out.strip
end

def median(a)
	s = a.sort
	s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

work(n / 10) # warm up
a0 = GC.stat(:total_allocated_objects)
work(n)
allocations = GC.stat(:total_allocated_objects) - a0
t = { base: [], vmheap: [], objspace: [] }
objects = sites = bytes = nil
runs.times do
	GC.start
	t[:base] << seconds { work(n) }

	agent(console, "set config.trace.allocations true")
	GC.start
	t[:vmheap] << seconds { work(n) }
	objects = agent(console, "get system.allocations.objects")
	sites = agent(console, "get system.allocations.sites")
	bytes = agent(console, "get system.allocations.bytes")
	agent(console, "set config.trace.allocations false")

	GC.start
	ObjectSpace.trace_object_allocations_start
	t[:objspace] << seconds { work(n) }
	ObjectSpace.trace_object_allocations_stop
	ObjectSpace.trace_object_allocations_clear
end

cpu = t.transform_values { |v| median(v.map(&:first)) }
base = cpu[:base]
puts "| #{n} steps (#{allocations} allocations), #{runs} runs | CPU s, median | x untraced |"
puts "| --- | --- | --- |"
puts format("| untraced | %.3f | 1.00 |", base)
puts format("| vmheap (config.trace.allocations) | %.3f | %.2f |",
	    cpu[:vmheap], cpu[:vmheap] / base)
puts format("| ObjectSpace.trace_object_allocations_start | %.3f | %.2f |",
	    cpu[:objspace], cpu[:objspace] / base)
puts
puts "vmheap's tables at the end of a traced loop: #{objects} objects, " \
     "#{sites} sites, #{bytes.tr("\n", " ")}."
puts "Every run, CPU/wall s: " + t.map { |k, v|
	"#{k} " + v.map { |c, w| format("%.3f/%.3f", c, w) }.join(" ")
}.join("; ")

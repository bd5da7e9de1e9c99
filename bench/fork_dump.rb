# bench/fork_dump.rb - the Ruby host's fork-mode dump against
# ObjectSpace.dump_all on one heap (issue 32 item 4), with the parts of
# the dump's time taken apart: the child's GC (config.dump.gc), the walk.
#
#   make bench-fork-dump [BENCH_OBJECTS=3000000] [BENCH_FORK_RUNS=5]
#
# Environment: as bench/run.rb (BENCH_OBJECTS, BENCH_RUNS, BENCH_DIR,
# VMHEAP_BUILD, VMHEAP_SRC, BENCH_TIMEOUT).
#
# Run after run, each after a full GC of the VM (as bench/run.rb does):
# a fork-mode dump (the default: the child runs a full GC, then walks), a
# fork-mode dump with config.dump.gc false, an in-process dump, and
# ObjectSpace.dump_all on the application thread.  For each: the wall
# seconds (the agent's reply; dump_all's own clock) and the CPU seconds
# (Process.times of the VM, and of its reaped children: the dump child).
# Then, on the first fork-mode dump and one taken after adding a tenth
# more items: vmheap-histo and vmheap-diff --no-suspects against cat of
# the same files (best of BENCH_TOOL_RUNS, default 5).
# Prints best and median of each and the ratios to dump_all of the same
# run; writes fork-dump.json in BENCH_DIR.
require "json"
require "fileutils"
require "rbconfig"
require_relative "lib/heap_vm"
require_relative "lib/timed_process"
require_relative "lib/vmheap_console"
require_relative "lib/bench_env"

include BenchEnv
DIR = BenchEnv.dir("bench-fork-dump")
LOG = ->(msg) { $stderr.puts("bench: #{msg}") }
ITEMS = [OBJECTS / 3, 10].max

def cpu(vm)
	s, c = vm.call("cpu")
	[s.to_f, c.to_f]
end

# [wall, cpu] of one timed step; the block returns its wall seconds.
def measured(vm)
	vm.call("gc")
	s0, c0 = cpu(vm)
	wall = yield
	s1, c1 = cpu(vm)
	[wall, (s1 - s0) + (c1 - c0)]
end

def vmheap_dump(console, name)
	reply = console.dump(name)
	path = File.join(DIR, name)
	raise "dump failed: #{reply.text.strip[0, 300]}" unless reply.ok && File.exist?(path)
	secs = VmheapConsole.reply_seconds(reply.text) or raise "no seconds in #{reply.text.inspect}"
	[secs, path]
end

def set(console, var, value)
	r = console.run("set #{var} #{value}")
	raise "set #{var} #{value}: #{r.text.strip}" unless r.ok
end

FileUtils.mkdir_p(DIR)
Dir.glob(File.join(DIR, "*")).each { |f| FileUtils.rm_rf(f) }
samples = Hash.new { |h, k| h[k] = [] }
sizes = {}
vm = HeapVM.new(ruby: RbConfig.ruby, heap_rb: File.join(SRC, "bench", "heap.rb"),
		items: ITEMS, dir: DIR, agent_dir: AGENT_DIR, log: LOG)
begin
	console = VmheapConsole.new(console: CONSOLE, pid: vm.pid, dir: DIR, timeout: TIMEOUT)
	objects = vm.live_objects
	RUNS.times do |r|
		LOG.call("run #{r + 1}/#{RUNS}")
		set(console, "config.dump.fork", "true")
		set(console, "config.dump.gc", "true")
		path = nil
		samples["fork"] << measured(vm) { w, path = vmheap_dump(console, "fork-#{r}.vmheap"); w }
		sizes["vmheap"] ||= File.size(path)
		FileUtils.rm_f(path) if r > 0
		set(console, "config.dump.gc", "false")
		samples["fork_nogc"] << measured(vm) { w, path = vmheap_dump(console, "nogc-#{r}.vmheap"); w }
		FileUtils.rm_f(path)
		set(console, "config.dump.gc", "true")
		set(console, "config.dump.fork", "false")
		samples["inproc"] << measured(vm) { w, path = vmheap_dump(console, "inproc-#{r}.vmheap"); w }
		FileUtils.rm_f(path)
		json = File.join(DIR, "dump_all-#{r}.json")
		samples["dump_all"] << measured(vm) { w, = vm.dump_all(json); w }
		sizes["dump_all"] ||= File.size(json)
		FileUtils.rm_f(json)
	end
	# The second dump, a tenth more items: the class diff's NEW.
	vm.grow([ITEMS / 10, 1].max)
	set(console, "config.dump.fork", "true")
	_, new_dump = vmheap_dump(console, "new.vmheap")
ensure
	vm.quit
end

# vmheap-histo and the class diff against cat on these real dumps (names
# and sites as the agent writes them), best of BENCH_TOOL_RUNS (5): wall
# and CPU (user + system of the reaped child) of each.
old_dump = File.join(DIR, "fork-0.vmheap")
tool_runs = Integer(ENV["BENCH_TOOL_RUNS"] || 5)
tools = {}
run_best = lambda do |argv|
	walls = []
	cpus = []
	tool_runs.times do
		t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
		c0 = Process.times
		system(*argv, out: File::NULL, err: File::NULL) or raise "#{argv.join(' ')} failed"
		c1 = Process.times
		walls << Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
		cpus << (c1.cutime + c1.cstime) - (c0.cutime + c0.cstime)
	end
	[walls.min, cpus.min]
end
system("cat", old_dump, new_dump, out: File::NULL) # the page cache
tools["cat"] = run_best.(["cat", old_dump])
tools["histo"] = run_best.([File.join(BUILD, "bin", "vmheap-histo"), old_dump])
tools["cat2"] = run_best.(["cat", old_dump, new_dump])
tools["diff"] = run_best.([File.join(BUILD, "bin", "vmheap-diff"), "--no-suspects", old_dump, new_dump])

# Ratios to dump_all of the same run, then best and median over runs.
med = ->(a) { s = a.sort; s[s.size / 2] }
out = { "objects" => objects, "runs" => RUNS, "sizes" => sizes, "samples" => samples,
	"load" => File.read("/proc/loadavg").split[0, 3].join(" ") }
puts "#{objects} live objects, #{RUNS} runs, load #{out['load']}; dump #{sizes['vmheap']} B, dump_all #{sizes['dump_all']} B"
puts format("%-10s %9s %9s %9s %9s   %s", "", "wall best", "wall med", "CPU best", "CPU med", "dump_all/this per run (wall; CPU)")
samples.each do |k, v|
	walls = v.map(&:first)
	cpus = v.map(&:last)
	per = v.each_with_index.map do |(w, c), i|
		dw, dc = samples["dump_all"][i]
		format("%.1f;%.1f", dw / w, dc / c)
	end
	puts format("%-10s %9.3f %9.3f %9.3f %9.3f   %s", k, walls.min, med.(walls), cpus.min, med.(cpus), per.join(" "))
end
puts "tools on the dumps (#{File.size(old_dump)} and #{File.size(new_dump)} B), best of #{tool_runs}, wall and CPU:"
[%w[histo cat], %w[diff cat2]].each do |t, c|
	(tw, tc), (cw, cc) = tools[t], tools[c]
	puts format("  %-6s %8.1f ms (CPU %6.1f ms); %-4s %8.1f ms (CPU %6.1f ms); ratio wall %.2f, CPU %.2f",
		    t, tw * 1e3, tc * 1e3, c, cw * 1e3, cc * 1e3, tw / cw, cc > 0 ? tc / cc : Float::NAN)
end
out["tools"] = tools
File.write(File.join(DIR, "fork-dump.json"), JSON.pretty_generate(out))

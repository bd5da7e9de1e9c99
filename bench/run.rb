# bench/run.rb - vmheap against ObjectSpace.dump_all and the Ruby
# analyzers, side by side, in one run on one heap.
#
#   ruby bench/run.rb            (make bench-ruby runs it)
#
# Environment:
#   BENCH_OBJECTS  heap size in objects (default 3000000: a third of them
#                  BenchItem, each holding a String and a Hash)
#   BENCH_RUNS     runs per figure; every figure is their median (default 3)
#   BENCH_DIR      work directory for dumps and outputs (default
#                  $VMHEAP_BUILD/bench-ruby); emptied of old dumps first
#   VMHEAP_BUILD   build directory holding bin/ and ruby/ (default build)
#   VMHEAP_SRC     repository root (default: the parent of bench/)
#   BENCH_TIMEOUT  seconds before one command is killed (default 900)
#   BENCH_COMMIT   the commit to name in the results (default: git's HEAD)
#
# Steps (see bench/RESULTS.md for what each figure means):
#   1. start bench/heap.rb with the vmheap agent; take dumps at a tenth
#      and at half of the heap (for histo's memory at several sizes);
#      grow the heap to BENCH_OBJECTS;
#   2. BENCH_RUNS times: a vmheap dump in fork mode, one in in-process
#      mode, and ObjectSpace.dump_all, each timed and each inside a ticker
#      window that records the VM's largest stall; plus an idle window;
#   3. grow the heap by a tenth; take the second vmheap dump and the
#      second dump_all (inputs of the diffs); stop the VM;
#   4. BENCH_RUNS times: cat of each file, vmheap-histo, the Ruby
#      histogram, the jq histogram, vmheap-diff and the Ruby diff, each
#      under /usr/bin/time -v for its peak RSS.
#
# Prints the table of medians and ratios, and writes results.json (every
# sample) and ruby-peers.md (the table for RESULTS.md) in BENCH_DIR.  A
# figure that could not be measured is printed as "missing" with the
# reason, and the exit status is 1 when any figure is missing.
require "json"
require "fileutils"
require "rbconfig"
require_relative "lib/figures"
require_relative "lib/heap_vm"
require_relative "lib/report"
require_relative "lib/timed_process"
require_relative "lib/vmheap_console"
require_relative "lib/bench_env"

include BenchEnv # SRC, BUILD, OBJECTS, RUNS, TIMEOUT, CONSOLE, AGENT_DIR
DIR = BenchEnv.dir("bench-ruby")
RUBY = RbConfig.ruby
HISTO = File.join(BUILD, "bin", "vmheap-histo")
DIFF = File.join(BUILD, "bin", "vmheap-diff")
PEERS = File.join(SRC, "bench", "peers")

ITEMS = [OBJECTS / 3, 10].max
SMALL_ITEMS = [ITEMS / 10, 1].max
HALF_ITEMS = [ITEMS / 2, SMALL_ITEMS].max
GROW_ITEMS = [ITEMS / 10, 1].max

LOG = ->(msg) { $stderr.puts("bench: #{msg}") }
FIG = Figures.new(log: LOG)

# ----------------------------------------------------------- the dumps
# A vmheap dump through the console inside a ticker window; records its
# time (the reply's seconds), the wall time of the -e call and the stall.
# Returns the dump's path or nil.
def vmheap_dump(vm, console, name, mode)
	reply, stall = vm.window { console.dump(name) }
	path = File.join(DIR, name)
	unless reply.ok && File.exist?(path)
		FIG.miss("dump.#{mode}", "vmheap-console dump failed: #{reply.text.strip[0, 300]}")
		return nil
	end
	secs = VmheapConsole.reply_seconds(reply.text)
	unless secs
		LOG.call("no seconds in the console's reply #{reply.text.strip.inspect}: using wall time")
		secs = reply.wall
	end
	FIG.add("dump.#{mode}", secs)
	FIG.add("dump.#{mode}.wall", reply.wall)
	FIG.add("pause.#{mode}", stall)
	path
end

# The live histogram (get system.memory.histogram, fork mode) inside a
# ticker window: its time (the reply's "walked in S s") and the stall.
def vmheap_histogram(vm, console)
	reply, stall = vm.window { console.run("get system.memory.histogram") }
	secs = reply.ok && VmheapConsole.reply_seconds(reply.text)
	unless secs && reply.text.include?("BenchItem")
		FIG.miss("histogram.fork", "get system.memory.histogram failed: #{reply.text.strip[0, 300]}")
		return
	end
	FIG.add("histogram.fork", secs)
	FIG.add("pause.histogram", stall)
end

def set_fork_mode(console, on)
	reply = console.fork_mode(on)
	return true if reply.ok
	FIG.miss(on ? "dump.fork" : "dump.inproc",
		 "set config.dump.fork #{on} failed: #{reply.text.strip}")
	false
end

# ObjectSpace.dump_all inside a ticker window, on the application thread
# ("dump_all") or on a side thread ("dump_all_side").  Returns the path.
def dump_all(vm, name, mode)
	path = File.join(DIR, name)
	(secs, bytes), stall = vm.window { vm.dump_all(path, side: mode == "dump_all_side") }
	FIG.add("dump.#{mode}", secs)
	FIG.add("pause.#{mode}", stall)
	FIG.add("size.dump_all", bytes) if mode == "dump_all"
	path
end

# ------------------------------------------------------- the analyzers
# Run one analyzer; record its wall time and peak RSS.
def analyze(key, argv, out: File::NULL)
	res = TimedProcess.run(argv, dir: DIR, timeout: TIMEOUT, out: out)
	unless res.ok
		FIG.miss("time.#{key}", "#{argv.map { |a| File.basename(a) }.join(' ')} failed: #{res.stderr.strip[0, 300]}")
		return
	end
	FIG.add("time.#{key}", res.wall)
	FIG.add("rss.#{key}", res.rss_bytes) if res.rss_bytes
end

# The BenchItem count in an analyzer's output (text, csv or tab table).
def bench_items_in(path)
	File.foreach(path) do |line|
		f = line.strip.split(/\s*[,\t]\s*|\s+/)
		i = f.index("BenchItem")
		return f[i - 1].to_i if i && i > 0
	end
	nil
end

# -------------------------------------------------------------- main
FileUtils.mkdir_p(DIR)
Dir.glob(File.join(DIR, "*")).each { |f| FileUtils.rm_rf(f) }
started = TimedProcess.now
info = Report.machine(SRC)
LOG.call("#{OBJECTS} objects (#{ITEMS} items), #{RUNS} runs, in #{DIR}")

have_agent = File.exist?(File.join(AGENT_DIR, "vmheap_agent.so"))
have_console = File.executable?(CONSOLE)
have_histo = File.executable?(HISTO)
have_diff = File.executable?(DIFF)
vmheap_dumps = have_agent && have_console
unless vmheap_dumps
	why = [(File.join(AGENT_DIR, "vmheap_agent.so") unless have_agent),
	       (CONSOLE unless have_console)].compact.join(" and ") + " not built"
	%w[dump.fork dump.inproc].each { |k| FIG.miss(k, why) }
end
FIG.miss("time.histo", "#{HISTO} not built") unless have_histo
FIG.miss("time.diff", "#{DIFF} not built") unless have_diff

vm = nil
dump1 = dump2 = small = half = json1 = json2 = nil
begin
	# 1. A tenth and a half of the heap, for histo's memory at several
	#    sizes; then the full heap.
	vm = HeapVM.new(ruby: RUBY, heap_rb: File.join(SRC, "bench", "heap.rb"),
			items: SMALL_ITEMS, dir: DIR,
			agent_dir: have_agent ? AGENT_DIR : nil, log: LOG)
	console = VmheapConsole.new(console: CONSOLE, pid: vm.pid, dir: DIR, timeout: TIMEOUT)
	small = vmheap_dump(vm, console, "small.vmheap", "small") if vmheap_dumps
	vm.grow(HALF_ITEMS - SMALL_ITEMS)
	half = vmheap_dump(vm, console, "half.vmheap", "half") if vmheap_dumps
	%w[small half].each { |k| %W[dump.#{k} dump.#{k}.wall pause.#{k}].each { |key| FIG.drop(key) } }
	vm.grow(ITEMS - HALF_ITEMS)
	FIG.add("objects", vm.live_objects)

	# 2. The dumps, run after run; one copy of each kind is kept.
	RUNS.times do |r|
		LOG.call("dump run #{r + 1}/#{RUNS}")
		_, stall = vm.window { sleep 0.5 }
		FIG.add("pause.idle", stall)
		if vmheap_dumps
			if set_fork_mode(console, true)
				vmheap_histogram(vm, console)
				p = vmheap_dump(vm, console, "d1-fork-#{r}.vmheap", "fork")
				if p && dump1.nil?
					dump1 = p
					FIG.add("size.vmheap", File.size(p))
				elsif p
					FileUtils.rm_f(p)
				end
			end
			if set_fork_mode(console, false)
				p = vmheap_dump(vm, console, "d1-inproc-#{r}.vmheap", "inproc")
				FileUtils.rm_f(p) if p
			end
		end
		FileUtils.rm_f(dump_all(vm, "side-#{r}.json", "dump_all_side"))
		p = dump_all(vm, "d1-#{r}.json", "dump_all")
		json1 ? FileUtils.rm_f(p) : (json1 = p)
	end

	# 3. The second dumps, after adding items: the diffs' NEW.
	LOG.call("growing the heap by #{GROW_ITEMS} items for the diff")
	vm.grow(GROW_ITEMS)
	if vmheap_dumps && set_fork_mode(console, true)
		reply = console.dump("d2.vmheap")
		if reply.ok && File.exist?(File.join(DIR, "d2.vmheap"))
			dump2 = File.join(DIR, "d2.vmheap")
		else
			FIG.miss("time.diff", "second vmheap dump failed: #{reply.text.strip[0, 300]}")
		end
	end
	json2 = File.join(DIR, "d2.json")
	vm.dump_all(json2)
ensure
	vm&.quit
end

# 4. The analyzers, run after run, every file in the page cache first.
[small, half, dump1, dump2, json1, json2].compact.each do |f|
	TimedProcess.run(["cat", f], dir: DIR, timeout: TIMEOUT)
end
RUNS.times do |r|
	LOG.call("analysis run #{r + 1}/#{RUNS}")
	keep = ->(key) { r.zero? ? File.join(DIR, "#{key}.out") : File::NULL }
	# The short ones first and five times over, each cat right before the
	# histo it is compared with: one sample of a 10 ms cat right after a
	# peer that freed 800 MB can be 5 times too slow.
	if dump1
		5.times do |k|
			analyze("cat_vmheap", ["cat", dump1])
			if have_histo
				analyze("histo", [HISTO, dump1], out: k.zero? ? keep.call("histo") : File::NULL)
				analyze("histo_half", [HISTO, half]) if half
				analyze("histo_small", [HISTO, small]) if small
			end
		end
		analyze("diff", [DIFF, dump1, dump2], out: keep.call("diff")) if have_diff && dump2
	end
	analyze("cat_json", ["cat", json1])
	analyze("histo_ruby", [RUBY, File.join(PEERS, "histo.rb"), json1], out: keep.call("histo_ruby"))
	analyze("histo_jq", ["jq", "-n", "-r", "-f", File.join(PEERS, "histo.jq"), json1],
		out: keep.call("histo_jq"))
	analyze("diff_ruby", [RUBY, File.join(PEERS, "diff.rb"), json1, json2], out: keep.call("diff_ruby"))
end

# Agreement: every histogram must count the BenchItem objects the heap
# holds, and every diff the items added.  A figure from an analyzer that
# computed something else would be no figure.
agreement = {}
{ "histo_ruby" => ITEMS, "histo_jq" => ITEMS, "histo" => ITEMS,
  "diff_ruby" => GROW_ITEMS, "diff" => GROW_ITEMS }.each do |key, want|
	path = File.join(DIR, "#{key}.out")
	next unless File.exist?(path)
	got = bench_items_in(path)
	agreement[key] = { "want" => want, "got" => got }
	next if got == want
	FIG.miss("time.#{key}", "#{key} counted #{got.inspect} BenchItem, the heap holds #{want}")
	FIG.drop("time.#{key}")
end

# ------------------------------------------------------------- table
m = FIG.medians
rep = Report.new
rep.add("dump time, fork mode / dump_all", m["dump.fork"], m["dump.dump_all"],
	unit: :secs, kind: :fraction, target: ["<= 1/5", ->(r) { r <= 0.2 }])
rep.add("dump time, in-process / dump_all", m["dump.inproc"], m["dump.dump_all"],
	unit: :secs, kind: :fraction)
rep.add("dump size / dump_all JSON", m["size.vmheap"], m["size.dump_all"],
	unit: :mb, kind: :fraction, target: ["<= 1/6", ->(r) { r <= 1.0 / 6 }])
rep.add("VM pause, fork mode / dump_all", m["pause.fork"], m["pause.dump_all"],
	unit: :ms, kind: :fraction, target: ["<= 1/50", ->(r) { r <= 0.02 }])
rep.add("live histogram time (fork, GC) / fork-mode dump", m["histogram.fork"], m["dump.fork"],
	unit: :secs, kind: :fraction)
rep.add("VM pause, live histogram / dump_all", m["pause.histogram"], m["pause.dump_all"],
	unit: :ms, kind: :fraction)
rep.add("VM pause, in-process / dump_all", m["pause.inproc"], m["pause.dump_all"],
	unit: :ms, kind: :fraction)
rep.add("VM pause, dump_all on a side thread / on the app thread", m["pause.dump_all_side"],
	m["pause.dump_all"], unit: :ms, kind: :fraction)
rep.add("VM pause, idle ticker (noise floor) / dump_all", m["pause.idle"], m["pause.dump_all"],
	unit: :ms, kind: :fraction)
rep.add("histo: Ruby histogram / vmheap-histo", m["time.histo"], m["time.histo_ruby"],
	unit: :secs, kind: :speedup, target: [">= 50x", ->(r) { r >= 50 }])
rep.add("histo: jq histogram / vmheap-histo", m["time.histo"], m["time.histo_jq"],
	unit: :secs, kind: :speedup)
rep.add("histo: vmheap-histo / cat of our dump", m["time.histo"], m["time.cat_vmheap"],
	unit: :secs, kind: :fraction, target: ["<= 4", ->(r) { r <= 4 }])
rep.add("cat: our dump / dump_all JSON", m["time.cat_vmheap"], m["time.cat_json"],
	unit: :secs, kind: :fraction)
rep.add("diff: Ruby diff / vmheap-diff", m["time.diff"], m["time.diff_ruby"],
	unit: :secs, kind: :speedup, target: [">= 30x", ->(r) { r >= 30 }])
rep.add("peak RSS: vmheap-histo / Ruby histogram", m["rss.histo"], m["rss.histo_ruby"],
	unit: :mb, kind: :fraction)
rep.add("peak RSS: vmheap-histo / jq histogram", m["rss.histo"], m["rss.histo_jq"],
	unit: :mb, kind: :fraction)
rep.add("peak RSS: vmheap-diff / Ruby diff", m["rss.diff"], m["rss.diff_ruby"],
	unit: :mb, kind: :fraction)
rep.add("peak RSS: vmheap-histo, full / half-size dump", m["rss.histo"], m["rss.histo_half"],
	unit: :mb, kind: :fraction)
rep.add("peak RSS: vmheap-histo, full / tenth-size dump", m["rss.histo"], m["rss.histo_small"],
	unit: :mb, kind: :fraction)
# Independent of the dump's size: from the tenth-size dump to the full
# one, histo's peak RSS may grow by a few per cent of what the file grows
# (noise: how much work its second thread gets); a tool that keeps any
# per-object state grows by at least a third of it.
size_small = small && File.size(small)
rep.add_growth("peak RSS growth of vmheap-histo / dump growth, tenth to full",
	       m["rss.histo"] && m["rss.histo_small"] && m["rss.histo"] - m["rss.histo_small"],
	       m["size.vmheap"] && size_small && m["size.vmheap"] - size_small,
	       target: ["<= 5% (flat)", ->(r) { r <= 0.05 }])

sizes = "vmheap dumps: #{Report.mb(m['size.vmheap'])} at #{m['objects']} objects" +
	(half ? ", #{Report.mb(File.size(half))} at half size" : "") +
	(small ? ", #{Report.mb(File.size(small))} at a tenth" : "")
build_rel = BUILD.delete_prefix("#{SRC}/")
command = "make bench-ruby" + (build_rel == "build" ? "" : " BUILD=#{build_rel}") +
	  " BENCH_OBJECTS=#{OBJECTS} BENCH_RUNS=#{RUNS}"
md = <<~MD
	- Machine: #{info['nproc']} CPUs (#{info['cpu']}), #{info['mem_mb']} MB, Linux #{info['kernel']}, load #{info['load']} at start
	- Ruby: #{info['ruby']}; #{info['jq']}
	- Date: #{info['date']}, commit #{info['commit']}, #{format('%.0f', TimedProcess.now - started)} s end to end
	- Command: `#{command}`
	- Heap: #{m['objects']} live objects (#{ITEMS} BenchItem + String + Hash), diff after adding #{GROW_ITEMS} items; #{sizes}
	- Medians of #{RUNS} runs. "measured" is vmheap (or the variant named first), "against" its peer; "ratio" is measured/against (a fraction), or against/measured where it is a speed-up ("x").

	#{rep.table}
MD
unless FIG.missing.empty?
	md << "\nMissing figures:\n"
	FIG.missing.each { |k, why| md << "- #{k}: #{why}\n" }
end

File.write(File.join(DIR, "ruby-peers.md"), md)
File.write(File.join(DIR, "results.json"),
	   JSON.pretty_generate({ "machine" => info, "command" => command,
				  "objects" => OBJECTS, "items" => ITEMS, "runs" => RUNS,
				  "samples" => FIG.samples, "medians" => m,
				  "agreement" => agreement, "missing" => FIG.missing,
				  "rows" => rep.rows.map(&:to_h) }))
puts md
puts
total = rep.rows.size
gone = rep.missing_count
puts "bench-ruby: #{total - gone} of #{total} figures produced" +
     (gone.zero? ? "" : ", #{gone} missing") + " (#{DIR}/results.json)"
exit(gone.zero? && FIG.missing.empty? ? 0 : 1)

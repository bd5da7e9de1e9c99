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

SRC = File.expand_path(ENV["VMHEAP_SRC"] || File.join(__dir__, ".."))
BUILD = File.expand_path(ENV["VMHEAP_BUILD"] || File.join(SRC, "build"), SRC)
OBJECTS = Integer(ENV["BENCH_OBJECTS"] || 3_000_000)
RUNS = Integer(ENV["BENCH_RUNS"] || 3)
DIR = File.expand_path(ENV["BENCH_DIR"] || File.join(BUILD, "bench-ruby"), SRC)
TIMEOUT = Integer(ENV["BENCH_TIMEOUT"] || 900)
RUBY = RbConfig.ruby
CONSOLE = File.join(BUILD, "bin", "vmheap-console")
HISTO = File.join(BUILD, "bin", "vmheap-histo")
DIFF = File.join(BUILD, "bin", "vmheap-diff")
AGENT_DIR = File.join(BUILD, "ruby")
PEERS = File.join(SRC, "bench", "peers")

ITEMS = [OBJECTS / 3, 10].max
SMALL_ITEMS = [ITEMS / 10, 1].max
HALF_ITEMS = [ITEMS / 2, SMALL_ITEMS].max
GROW_ITEMS = [ITEMS / 10, 1].max

def log(msg)
	$stderr.puts("bench: #{msg}")
end

def now
	Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

def median(xs)
	return nil if xs.nil? || xs.empty?
	s = xs.sort
	n = s.size
	n.odd? ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0
end

# ------------------------------------------------------------ samples
# Every figure is a list of samples; missing figures carry a reason.
$samples = Hash.new { |h, k| h[k] = [] }
$missing = {}

def sample(key, value)
	$samples[key] << value
end

def missing(key, why)
	$missing[key] ||= why
	log("#{key}: missing: #{why}")
end

# --------------------------------------------------- running commands
# Run argv under /usr/bin/time -v; return [ok, wall seconds, peak RSS
# kB, stderr text].  Stdout goes to `out` (a path, or /dev/null).
def measure(argv, out: File::NULL, env: {})
	tfile = File.join(DIR, "time.txt")
	efile = File.join(DIR, "stderr.txt")
	FileUtils.rm_f(tfile)
	t0 = now
	pid = Process.spawn(env, "/usr/bin/time", "-v", "-o", tfile, *argv,
			    out: out, err: efile, pgroup: true)
	status = wait_with_timeout(pid)
	wall = now - t0
	rss = File.exist?(tfile) ? File.read(tfile)[/Maximum resident set size \(kbytes\): (\d+)/, 1]&.to_i : nil
	err = File.exist?(efile) ? File.read(efile) : ""
	[status&.success?, wall, rss, err]
end

def wait_with_timeout(pid)
	done = false
	watchdog = Thread.new do
		sleep TIMEOUT
		unless done
			log("pid #{pid} ran over #{TIMEOUT} s: killing it")
			Process.kill("KILL", -pid) rescue nil
		end
	end
	_, status = Process.wait2(pid)
	done = true
	watchdog.kill
	status
end

# -------------------------------------------------- the benchmarked VM
# An ASan-built extension (make check-asan's build) loads only into a
# process that has the ASan runtime first: preload it into the VM, as
# spec/ruby.mk does for the Ruby suite.
def asan_env
	so = File.join(AGENT_DIR, "vmheap_agent.so")
	lib = `ldd #{so} 2>/dev/null`[/libasan\S*\s*=>\s*(\S+)/, 1]
	lib ? { "LD_PRELOAD" => lib, "ASAN_OPTIONS" => "detect_leaks=0" } : {}
end

class HeapVM
	attr_reader :pid, :agent

	def initialize(items, agent:)
		@agent = agent
		argv = [RUBY]
		argv += ["-I", AGENT_DIR, "-rvmheap_agent"] if agent
		argv += [File.join(SRC, "bench", "heap.rb"), items.to_s]
		env = { "VMHEAP_AGENT_DIR" => DIR, "VMHEAP_AGENT_TMPDIR" => DIR,
			"TMPDIR" => DIR }
		env.merge!(asan_env) if agent
		@in_r, @in_w = IO.pipe
		@out_r, @out_w = IO.pipe
		@pid = Process.spawn(env, *argv, in: @in_r, out: @out_w,
				     err: File.join(DIR, "heap.stderr"), chdir: DIR)
		@in_r.close
		@out_w.close
		line = @out_r.gets or raise "heap.rb died while building the heap (see #{DIR}/heap.stderr)"
		_, @vm_pid, n, secs = line.split
		log("heap of #{n} items (#{3 * n.to_i} objects) built in #{secs} s, pid #{@pid}")
	end

	# Send one command, return the reply's fields after "ok".
	def call(line)
		@in_w.write("#{line}\n")
		@in_w.flush
		reply = @out_r.gets or raise "heap.rb died on #{line.inspect} (see #{DIR}/heap.stderr)"
		fields = reply.split
		raise "heap.rb: #{reply.strip}" unless fields.first == "ok"
		fields.drop(1)
	end

	def quit
		@in_w.write("quit\n") rescue nil
		@in_w.close rescue nil
		Process.wait(@pid)
	rescue Errno::ECHILD
		nil
	end

	def kill
		Process.kill("KILL", @pid)
		Process.wait(@pid)
	rescue Errno::ESRCH, Errno::ECHILD
		nil
	end
end

# ----------------------------------------------------- vmheap's dumps
def console_env
	{ "TMPDIR" => DIR, "VMHEAP_AGENT_TMPDIR" => DIR }
end

# Run one console command against the VM; return [ok, wall, output].
def console(vm, command)
	out = File.join(DIR, "console.out")
	t0 = now
	pid = Process.spawn(console_env, CONSOLE, "-p", vm.pid.to_s, "-e", command,
			    out: out, err: [:child, :out], pgroup: true)
	status = wait_with_timeout(pid)
	[status&.success?, now - t0, File.read(out)]
end

# The seconds a dump reply reports ("... 1.234 s", "1.234s",
# "seconds: 1.234", "seconds=1.234"), or nil.
def reply_seconds(text)
	m = text.match(/seconds?["']?\s*[:=]\s*([0-9]+(?:\.[0-9]+)?)/i) ||
	    text.match(/([0-9]+(?:\.[0-9]+)?)\s*(?:s|sec|secs|seconds)\b/i)
	m && m[1].to_f
end

def set_fork_mode(vm, on)
	ok, _, out = console(vm, "set config.dump.fork #{on}")
	ok or missing(on ? "pause.fork" : "pause.inproc",
		      "set config.dump.fork #{on} failed: #{out.strip}")
	ok
end

# One vmheap dump inside a ticker window.  Returns the path or nil.
def vmheap_dump(vm, name, mode)
	vm.call("gc")
	vm.call("reset")
	ok, wall, out = console(vm, "set system.memory.dump #{name}")
	gap, _ticks = vm.call("gap")
	path = File.join(DIR, name)
	unless ok && File.exist?(path)
		missing("dump.#{mode}", "vmheap-console dump failed: #{out.strip[0, 300]}")
		return nil
	end
	secs = reply_seconds(out)
	sample("dump.#{mode}.wall", wall)
	if secs
		sample("dump.#{mode}", secs)
	else
		log("no seconds in the console's reply #{out.strip.inspect}: using wall time")
		sample("dump.#{mode}", wall)
	end
	sample("pause.#{mode}", gap.to_f / 1000)
	sample("size.vmheap", File.size(path)) if mode == "fork"
	path
end

# ObjectSpace.dump_all inside a ticker window: on the application thread
# (mode "dump_all") or on a side thread (mode "dump_all_side").
def dump_all(vm, name, mode = "dump_all")
	path = File.join(DIR, name)
	vm.call("gc")
	vm.call("reset")
	secs, bytes = vm.call("#{mode} #{path}")
	gap, _ticks = vm.call("gap")
	sample("dump.#{mode}", secs.to_f)
	sample("pause.#{mode}", gap.to_f / 1000)
	sample("size.dump_all", bytes.to_i) if mode == "dump_all"
	path
end

def idle_window(vm)
	vm.call("gc")
	vm.call("reset")
	sleep 0.5
	gap, _ticks = vm.call("gap")
	sample("pause.idle", gap.to_f / 1000)
end

# ------------------------------------------------------ the analyzers
# Time one analyzer run; record its wall time and peak RSS.
def analyze(key, argv, out: File::NULL)
	ok, wall, rss, err = measure(argv, out: out)
	unless ok
		missing(key, "#{argv.map { |a| File.basename(a) }.join(' ')} failed: #{err.strip[0, 300]}")
		return false
	end
	sample("time.#{key}", wall)
	sample("rss.#{key}", rss * 1024) if rss
	true
end

# Count of BenchItem in an analyzer's output (text, csv or tab table).
def bench_items_in(path)
	return nil unless File.exist?(path)
	File.foreach(path) do |line|
		f = line.strip.split(/\s*[,\t]\s*|\s+/)
		i = f.index("BenchItem")
		return f[i - 1].to_i if i && i > 0
	end
	nil
end


# ----------------------------------------------------------- machine
def machine
	model = File.read("/proc/cpuinfo")[/^model name\s*:\s*(.*)$/, 1] rescue "?"
	mem = File.read("/proc/meminfo")[/^MemTotal:\s*(\d+)/, 1].to_i / 1024 rescue 0
	{ "nproc" => `nproc`.strip, "cpu" => model, "mem_mb" => mem,
	  "kernel" => `uname -r`.strip, "ruby" => RUBY_DESCRIPTION,
	  "date" => Time.now.utc.strftime("%Y-%m-%d %H:%M UTC"),
	  "commit" => `git -C #{SRC} rev-parse --short HEAD 2>/dev/null`.strip,
	  "load" => File.read("/proc/loadavg").split.first(3).join(" ") }
end

# -------------------------------------------------------------- main
FileUtils.mkdir_p(DIR)
Dir.glob(File.join(DIR, "*")).each { |f| FileUtils.rm_rf(f) }
started = now
info = machine
log("#{OBJECTS} objects (#{ITEMS} items), #{RUNS} runs, in #{DIR}")

have_agent = File.exist?(File.join(AGENT_DIR, "vmheap_agent.so"))
have_console = File.executable?(CONSOLE)
have_histo = File.executable?(HISTO)
have_diff = File.executable?(DIFF)
VMHEAP_KEYS = %w[dump.fork dump.inproc pause.fork pause.inproc size.vmheap
		 time.histo time.cat_vmheap time.histo_small time.diff
		 rss.histo rss.histo_small rss.diff].freeze
unless have_agent && have_console
	why = [("#{AGENT_DIR}/vmheap_agent.so" unless have_agent),
	       ("#{CONSOLE}" unless have_console)].compact.join(" and ") + " not built"
	%w[dump.fork dump.inproc pause.fork pause.inproc size.vmheap].each { |k| missing(k, why) }
end

vm = nil
dump1 = dump2 = small = half = json1 = json2 = nil
begin
	vm = HeapVM.new(SMALL_ITEMS, agent: have_agent)
	if have_agent && have_console
		small = vmheap_dump(vm, "small.vmheap", "small")
	end
	vm.call("grow #{HALF_ITEMS - SMALL_ITEMS}")
	half = vmheap_dump(vm, "half.vmheap", "half") if have_agent && have_console
	%w[small half].each do |k|
		%W[dump.#{k} dump.#{k}.wall pause.#{k}].each { |key| $samples.delete(key) }
	end
	vm.call("grow #{ITEMS - HALF_ITEMS}")
	sample("objects", vm.call("count").first.to_i)

	RUNS.times do |r|
		log("dump run #{r + 1}/#{RUNS}")
		idle_window(vm)
		if have_agent && have_console
			if set_fork_mode(vm, true)
				p = vmheap_dump(vm, "d1-fork-#{r}.vmheap", "fork")
				dump1 ||= p
			end
			if set_fork_mode(vm, false)
				p = vmheap_dump(vm, "d1-inproc-#{r}.vmheap", "inproc")
				FileUtils.rm_f(p) if p
			end
		end
		FileUtils.rm_f(dump_all(vm, "side-#{r}.json", "dump_all_side"))
		p = dump_all(vm, "d1-#{r}.json")
		if json1
			FileUtils.rm_f(p)
		else
			json1 = p
		end
		Dir.glob(File.join(DIR, "d1-fork-*.vmheap")).each { |f| FileUtils.rm_f(f) unless f == dump1 }
	end

	log("growing the heap by #{GROW_ITEMS} items for the diff")
	vm.call("grow #{GROW_ITEMS}")
	if have_agent && have_console
		set_fork_mode(vm, true)
		ok, _, out = console(vm, "set system.memory.dump d2.vmheap")
		if ok && File.exist?(File.join(DIR, "d2.vmheap"))
			dump2 = File.join(DIR, "d2.vmheap")
		else
			missing("time.diff", "second vmheap dump failed: #{out.strip[0, 300]}")
		end
	end
	json2 = File.join(DIR, "d2.json")
	vm.call("dump_all #{json2}")
ensure
	vm&.quit
end

# Warm the page cache so that every reader starts from the same place.
[small, half, dump1, dump2, json1, json2].compact.each { |f| measure(["cat", f]) }

histo_keys = {}
RUNS.times do |r|
	log("analysis run #{r + 1}/#{RUNS}")
	first = r.zero?
	analyze("cat_json", ["cat", json1])
	analyze("histo_ruby", [RUBY, File.join(PEERS, "histo.rb"), json1],
		out: first ? File.join(DIR, "histo_ruby.out") : File::NULL)
	analyze("histo_jq", ["jq", "-n", "-r", "-f", File.join(PEERS, "histo.jq"), json1],
		out: first ? File.join(DIR, "histo_jq.out") : File::NULL)
	analyze("diff_ruby", [RUBY, File.join(PEERS, "diff.rb"), json1, json2],
		out: first ? File.join(DIR, "diff_ruby.out") : File::NULL)
	if dump1
		analyze("cat_vmheap", ["cat", dump1])
		if have_histo
			analyze("histo", [HISTO, dump1],
				out: first ? File.join(DIR, "histo.out") : File::NULL)
			analyze("histo_small", [HISTO, small]) if small
			analyze("histo_half", [HISTO, half]) if half
		end
		if have_diff && dump2
			analyze("diff", [DIFF, dump1, dump2],
				out: first ? File.join(DIR, "diff.out") : File::NULL)
		end
	end
end
missing("time.histo", "#{HISTO} not built") unless have_histo
missing("time.diff", "#{DIFF} not built") unless have_diff
missing("time.histo", "no vmheap dump") if have_histo && !dump1

# --------------------------------------------------------- agreement
# Every histogram must count the BenchItem objects the heap holds, and
# every diff must show the items added: a figure from an analyzer that
# computed something else would be no figure.
checks = {}
{ "histo_ruby" => ITEMS, "histo_jq" => ITEMS, "histo" => ITEMS,
  "diff_ruby" => GROW_ITEMS, "diff" => GROW_ITEMS }.each do |key, want|
	path = File.join(DIR, "#{key}.out")
	next unless File.exist?(path)
	got = bench_items_in(path)
	checks[key] = { "want" => want, "got" => got }
	next if got == want
	missing("time.#{key}", "#{key} counted #{got.inspect} BenchItem, the heap holds #{want}")
	$samples.delete("time.#{key}")
end

# ------------------------------------------------------------- table
med = $samples.transform_values { |v| median(v) }

def fmt_secs(s) = s.nil? ? "missing" : (s < 1 ? format("%.1f ms", s * 1000) : format("%.2f s", s))
def fmt_bytes(b) = b.nil? ? "missing" : format("%.1f MB", b / 1e6)
def fmt_ms(s) = s.nil? ? "missing" : format("%.1f ms", s * 1000)

# [figure, ours, peer, ratio text, target text, met?]
Row = Struct.new(:figure, :ours, :peer, :ratio, :target, :verdict)
rows = []
ratio_row = lambda do |figure, a, b, fmt, kind, target_text, test|
	if a.nil? || b.nil? || b.zero? || a.zero?
		rows << Row.new(figure, fmt.call(a), fmt.call(b), "missing", target_text, "-")
		next
	end
	r = kind == :frac ? a.to_f / b : b.to_f / a
	rtxt = if kind != :frac then format("%.1fx", r)
	       elsif r < 1 then format("%.3f (1/%.1f)", r, 1 / r)
	       else format("%.2f", r) end
	rows << Row.new(figure, fmt.call(a), fmt.call(b), rtxt, target_text,
			test ? (test.call(r) ? "met" : "MISSED") : "")
end

m = med
ratio_row.call("dump time, fork mode / dump_all", m["dump.fork"], m["dump.dump_all"], method(:fmt_secs), :frac, "<= 1/5", ->(r) { r <= 0.2 })
ratio_row.call("dump time, in-process / dump_all", m["dump.inproc"], m["dump.dump_all"], method(:fmt_secs), :frac, "", nil)
ratio_row.call("dump size / dump_all JSON", m["size.vmheap"], m["size.dump_all"], method(:fmt_bytes), :frac, "<= 1/6", ->(r) { r <= 1.0 / 6 })
ratio_row.call("VM pause, fork mode / dump_all", m["pause.fork"], m["pause.dump_all"], method(:fmt_ms), :frac, "<= 1/50", ->(r) { r <= 0.02 })
ratio_row.call("VM pause, in-process / dump_all", m["pause.inproc"], m["pause.dump_all"], method(:fmt_ms), :frac, "", nil)
ratio_row.call("VM pause, dump_all on a side thread / on the app thread", m["pause.dump_all_side"], m["pause.dump_all"], method(:fmt_ms), :frac, "", nil)
ratio_row.call("VM pause, idle ticker (noise floor)", m["pause.idle"], m["pause.dump_all"], method(:fmt_ms), :frac, "", nil)
ratio_row.call("histo: Ruby histogram / vmheap-histo", m["time.histo"], m["time.histo_ruby"], method(:fmt_secs), :speedup, ">= 50x", ->(r) { r >= 50 })
ratio_row.call("histo: jq histogram / vmheap-histo", m["time.histo"], m["time.histo_jq"], method(:fmt_secs), :speedup, "", nil)
ratio_row.call("histo: vmheap-histo / cat of our dump", m["time.histo"], m["time.cat_vmheap"], method(:fmt_secs), :frac, "<= 4", ->(r) { r <= 4 })
ratio_row.call("cat: our dump / dump_all JSON", m["time.cat_vmheap"], m["time.cat_json"], method(:fmt_secs), :frac, "", nil)
ratio_row.call("diff: Ruby diff / vmheap-diff", m["time.diff"], m["time.diff_ruby"], method(:fmt_secs), :speedup, ">= 30x", ->(r) { r >= 30 })
ratio_row.call("peak RSS: vmheap-histo / Ruby histogram", m["rss.histo"], m["rss.histo_ruby"], method(:fmt_bytes), :frac, "", nil)
ratio_row.call("peak RSS: vmheap-histo / jq histogram", m["rss.histo"], m["rss.histo_jq"], method(:fmt_bytes), :frac, "", nil)
ratio_row.call("peak RSS: vmheap-diff / Ruby diff", m["rss.diff"], m["rss.diff_ruby"], method(:fmt_bytes), :frac, "", nil)
ratio_row.call("peak RSS: vmheap-histo, full / half-size dump", m["rss.histo"], m["rss.histo_half"], method(:fmt_bytes), :frac, "<= 1.2 (flat)", ->(r) { r <= 1.2 })
ratio_row.call("peak RSS: vmheap-histo, full / tenth-size dump", m["rss.histo"], m["rss.histo_small"], method(:fmt_bytes), :frac, "", nil)

size_note = "vmheap dumps: #{fmt_bytes(m['size.vmheap'])} at #{m['objects']} objects" +
	    (half ? ", #{fmt_bytes(File.size(half))} at half size" : "") +
	    (small ? ", #{fmt_bytes(File.size(small))} at a tenth" : "")

def table(rows)
	head = ["figure", "measured", "against", "ratio", "target", "verdict"]
	lines = ["| #{head.join(' | ')} |", "|#{head.map { '---' }.join('|')}|"]
	rows.each { |r| lines << "| #{r.to_a.join(' | ')} |" }
	lines.join("\n")
end

elapsed = now - started
build_rel = BUILD.delete_prefix("#{SRC}/")
command = "make bench-ruby" + (build_rel == "build" ? "" : " BUILD=#{build_rel}") +
	  " BENCH_OBJECTS=#{OBJECTS} BENCH_RUNS=#{RUNS}"
md = <<~MD
	Machine: #{info['nproc']} CPUs (#{info['cpu']}), #{info['mem_mb']} MB, Linux #{info['kernel']}, load #{info['load']} at start
	Ruby: #{info['ruby']}
	Date: #{info['date']}, commit #{info['commit']}, #{format('%.0f', elapsed)} s end to end
	Command: `#{command}`
	Heap: #{m['objects']} live objects (#{ITEMS} BenchItem + String + Hash), diff after adding #{GROW_ITEMS} items; #{size_note}
	Medians of #{RUNS} runs. "measured" is vmheap (or the variant named first), "against" its peer; "ratio" is measured/against (a fraction), or against/measured where it is a speed-up ("x").

	#{table(rows)}
MD
unless $missing.empty?
	md << "\nMissing figures:\n"
	$missing.each { |k, why| md << "- #{k}: #{why}\n" }
end

File.write(File.join(DIR, "ruby-peers.md"), md)
File.write(File.join(DIR, "results.json"),
	   JSON.pretty_generate({ "machine" => info, "command" => command,
				  "objects" => OBJECTS, "items" => ITEMS, "runs" => RUNS,
				  "samples" => $samples, "medians" => med,
				  "agreement" => checks, "missing" => $missing,
				  "rows" => rows.map(&:to_h) }))
puts md
puts
figures = rows.size
gone = rows.count { |r| r.ratio == "missing" }
puts "bench-ruby: #{figures - gone} of #{figures} figures produced" +
     (gone.zero? ? "" : ", #{gone} missing") + " (#{DIR}/results.json)"
exit(gone.zero? && $missing.empty? ? 0 : 1)

# bench/lib/heap_vm.rb - the benchmarked Ruby VM (bench/heap.rb), driven
# line by line over a pipe, and its ticker windows.
require_relative "timed_process"

class HeapVM
	attr_reader :pid

	# Start `ruby [-I AGENT_DIR -rvmheap_agent] HEAP_RB ITEMS` in `dir`
	# (its dump and discovery directory) and wait until the heap is
	# built.
	def initialize(ruby:, heap_rb:, items:, dir:, agent_dir: nil,
		       log: ->(msg) { $stderr.puts(msg) })
		@dir = dir
		argv = [ruby]
		argv += ["-I", agent_dir, "-rvmheap_agent"] if agent_dir
		argv += [heap_rb, items.to_s]
		env = { "VMHEAP_AGENT_DIR" => dir, "VMHEAP_AGENT_TMPDIR" => dir,
			"TMPDIR" => dir }
		env.merge!(HeapVM.asan_env(File.join(agent_dir, "vmheap_agent.so"))) if agent_dir
		in_r, @in_w = IO.pipe
		@out_r, out_w = IO.pipe
		@pid = Process.spawn(env, *argv, in: in_r, out: out_w,
				     err: File.join(dir, "heap.stderr"), chdir: dir)
		in_r.close
		out_w.close
		line = @out_r.gets or raise "heap.rb died while building the heap (see #{dir}/heap.stderr)"
		_, _pid, n, secs = line.split
		log.call("heap of #{n} items (#{3 * n.to_i} objects) built in #{secs} s, pid #{@pid}")
	end

	# An ASan-built extension (make check-asan's build) loads only into a
	# process that has the ASan runtime first: preload it, as spec/ruby.mk
	# does for the Ruby suite.
	def self.asan_env(so)
		lib = `ldd #{so} 2>/dev/null`[/libasan\S*\s*=>\s*(\S+)/, 1]
		lib ? { "LD_PRELOAD" => lib, "ASAN_OPTIONS" => "detect_leaks=0" } : {}
	end

	# Send one command; return the reply's fields after "ok".
	def call(line)
		@in_w.write("#{line}\n")
		@in_w.flush
		reply = @out_r.gets or raise "heap.rb died on #{line.inspect} (see #{@dir}/heap.stderr)"
		fields = reply.split
		raise "heap.rb: #{reply.strip}" unless fields.first == "ok"
		fields.drop(1)
	end

	# Run the block inside a ticker window that starts right after a full
	# GC.  Returns [the block's value, the largest stall in seconds].
	def window
		call("gc")
		call("reset")
		value = yield
		ms, _ticks = call("gap")
		[value, ms.to_f / 1000]
	end

	# ObjectSpace.dump_all to path, on the application thread (side:
	# false) or on a side thread.  Returns [seconds, bytes].
	def dump_all(path, side: false)
		secs, bytes = call("#{side ? 'dump_all_side' : 'dump_all'} #{path}")
		[secs.to_f, bytes.to_i]
	end

	def grow(items)
		call("grow #{items}")
	end

	def live_objects
		call("count").first.to_i
	end

	def quit
		@in_w.write("quit\n") rescue nil
		@in_w.close rescue nil
		Process.wait(@pid)
	rescue Errno::ECHILD
		nil
	end
end

# bench/lib/timed_process.rb - run a command as its own process, timed
# with a monotonic clock and under /usr/bin/time -v for its peak RSS,
# killed (its process group) if it runs over a time limit.

module TimedProcess
	Result = Struct.new(:ok, :wall, :rss_bytes, :stderr)

	def self.now
		Process.clock_gettime(Process::CLOCK_MONOTONIC)
	end

	# Run argv; its stdout goes to `out` (a path, or File::NULL).  Scratch
	# files go to `dir`.
	def self.run(argv, dir:, timeout:, out: File::NULL, env: {})
		tfile = File.join(dir, "time.txt")
		efile = File.join(dir, "stderr.txt")
		File.delete(tfile) if File.exist?(tfile)
		t0 = now
		pid = Process.spawn(env, "/usr/bin/time", "-v", "-o", tfile, *argv,
				    out: out, err: efile, pgroup: true)
		status = wait(pid, timeout)
		wall = now - t0
		kb = File.exist?(tfile) &&
		     File.read(tfile)[/Maximum resident set size \(kbytes\): (\d+)/, 1]
		Result.new(status&.success?, wall, kb ? kb.to_i * 1024 : nil,
			   File.exist?(efile) ? File.read(efile) : "")
	end

	# Wait for pid (spawned with pgroup: true); after `timeout` seconds
	# kill its process group.  Returns its Process::Status.
	def self.wait(pid, timeout)
		done = false
		watchdog = Thread.new do
			sleep timeout
			unless done
				$stderr.puts("bench: pid #{pid} ran over #{timeout} s: killing it")
				Process.kill("KILL", -pid) rescue nil
			end
		end
		_, status = Process.wait2(pid)
		done = true
		watchdog.kill
		status
	end
end

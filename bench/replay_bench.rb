# vmheap-replay's bench (issue 31, `make bench-replay`): record two Ruby
# workloads of Ruby's own stdlib with vmheap-run --record, replay each
# under glibc, jemalloc, tcmalloc and mimalloc (RUNS times, medians), and
# print which allocator gives the lowest peak RSS and the fastest replay,
# by how much, and the replay rate under glibc (goal: 10M events/s).
#
# Three ways per trace: the recorded threads writing each block's first
# byte (the default), one thread (the rate), and the recorded threads
# with --touch pages (every page of every block resident: RSS against
# live bytes is then the allocator's overhead alone).  Wall seconds on a
# shared machine include the time other jobs held the cores; CPU seconds
# (the engine's, all its threads) do not, and rank the allocators.
#
# usage: ruby replay_bench.rb BUILD_DIR [RUNS]
#   BENCH_REPLAY_ROUNDS   rounds of bench/native_stdlib.rb (default 40)
#   BENCH_REPLAY_REQUESTS requests of bench/replay_rack.rb (default 10000)
require 'fileutils'
require 'json'
require 'tmpdir'

build = File.expand_path(ARGV[0] || 'build')
runs = (ARGV[1] || 3).to_i
run = File.join(build, 'bin/vmheap-run')
replay = File.join(build, 'bin/vmheap-replay')
ALLOCATORS = %w[glibc jemalloc tcmalloc mimalloc].freeze
MODES = { 'recorded threads, first byte' => %w[--threads recorded --touch first],
          'one thread, first byte' => %w[--threads 1 --touch first],
          'recorded threads, every page' => %w[--threads recorded --touch pages] }.freeze

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

def median(xs)
  s = xs.sort
  s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

def mib(b) = format('%.1f MiB', b / 1048576.0)

workloads = {
  'stdlib' => ['ruby', File.join(__dir__, 'native_stdlib.rb'), ENV.fetch('BENCH_REPLAY_ROUNDS', '40')],
  'rack' => ['ruby', File.join(__dir__, 'replay_rack.rb'), ENV.fetch('BENCH_REPLAY_REQUESTS', '10000'), '4']
}
dir = Dir.mktmpdir('vmheap-bench-replay')
at_exit { FileUtils.rm_rf(dir) }
puts format('bench-replay: %d runs of each, load average at the start %s', runs,
            File.read('/proc/loadavg').split[0, 3].join(' '))

# How much of a core this machine gives a busy loop now: on a shared
# machine wall seconds are this many times CPU seconds for any work.
def core_share
  w0 = now
  c0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - c0 < 0.3
  (Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - c0) / (now - w0)
end
puts format('a busy loop gets %.0f%% of a core at the start', core_share * 100)
workloads.each do |name, cmd|
  trace = File.join(dir, "#{name}.trace")
  t0 = now
  system(run, '--record', trace, *cmd, out: File::NULL) or abort "bench-replay: recording #{name} failed"
  rec_wall = now - t0
  bytes = File.size(trace)
  res = Hash.new { |h, k| h[k] = Hash.new { |g, a| g[a] = [] } }
  parent_cpu = []
  runs.times do
    MODES.each do |mode, args|
      c0 = Process.times
      out = IO.popen([replay, '--format', 'json', *args, trace], &:read)
      abort "bench-replay: vmheap-replay #{name} #{mode} failed" unless $?.success?
      c1 = Process.times
      rows = JSON.parse(out)
      rows.each { |r| res[mode][r['allocator']] << r }
      cpu = c1.cutime + c1.cstime - c0.cutime - c0.cstime
      parent_cpu << cpu - rows.sum { |r| r['cpu_seconds'] } if mode.start_with?('one')
    end
  end
  events = res.values.first['glibc'][0]['ops']
  puts "\n== #{name}: #{cmd.map { |c| File.basename(c) }.join(' ')}"
  puts format('trace: %.1f MB, %d events replayed, %.2f bytes/event; recording ran %.1f s (wall)',
              bytes / 1e6, events, bytes.to_f / events, rec_wall)
  MODES.each_key do |mode|
    puts "\n#{mode} (median of #{runs}):\n\n"
    puts '| allocator | CPU s | wall s | ns/event (wall) | peak RSS | RSS end | live peak | live end | frag. peak | frag. end |'
    puts '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |'
    ALLOCATORS.each do |a|
      rs = res[mode][a]
      next if rs.empty?

      m = ->(k) { median(rs.map { |r| r[k] }) }
      puts format('| %s | %.3f | %.3f | %.1f | %s | %s | %s | %s | %.3f | %.3f |', a, m.('cpu_seconds'),
                  m.('seconds'), m.('ns_per_op'), mib(m.('peak_rss')), mib(m.('rss_end')),
                  mib(rs[0]['live_bytes_peak']), mib(rs[0]['live_bytes_end']),
                  m.('fragmentation_peak'), m.('fragmentation_end'))
    end
  end
  med = ->(mode, a, k) { median(res[mode][a].map { |r| r[k] }) }
  present = ALLOCATORS.reject { |a| res[MODES.keys[0]][a].empty? }
  puts
  [MODES.keys[2], MODES.keys[0]].each do |mode|
    by = present.sort_by { |a| med.(mode, a, 'peak_rss') }
    lo = med.(mode, by[0], 'peak_rss').to_f
    puts format('answer (%s, %s): lowest peak RSS %s, %s; then %s', name, mode, by[0], mib(lo),
                by[1..].map { |a| format('%s %s (+%.0f%%)', a, mib(med.(mode, a, 'peak_rss')),
                                         (med.(mode, a, 'peak_rss') / lo - 1) * 100) }.join(', '))
  end
  MODES.each_key do |mode|
    next if mode.end_with?('page')

    by = present.sort_by { |a| med.(mode, a, 'cpu_seconds') }
    lo = med.(mode, by[0], 'cpu_seconds')
    puts format('answer (%s, %s): fastest replay %s, %.3f CPU s; then %s (wall: %s)', name, mode, by[0], lo,
                by[1..].map { |a| format('%s %.3f s (%.2fx)', a, med.(mode, a, 'cpu_seconds'),
                                         med.(mode, a, 'cpu_seconds') / lo) }.join(', '),
                present.map { |a| format('%s %.3f s', a, med.(mode, a, 'seconds')) }.join(', '))
  end
  one = MODES.keys[1]
  puts format('glibc replay rate, one thread: %.1fM events/s of CPU, %.1fM events/s of wall ' \
              '(goal 10M: %s by CPU, %s by wall)',
              events / med.(one, 'glibc', 'cpu_seconds') / 1e6, events / med.(one, 'glibc', 'seconds') / 1e6,
              events / med.(one, 'glibc', 'cpu_seconds') >= 1e7 ? 'met' : 'NOT met',
              events / med.(one, 'glibc', 'seconds') >= 1e7 ? 'met' : 'NOT met')
  puts format('reading and checking the trace (vmheap-replay itself, CPU): %.2f s median, %.1fM events/s',
              median(parent_cpu), events / median(parent_cpu) / 1e6)
end
puts <<~TXT

  The source article (Joe Damato, "a/b test mallocs against your memory footprint",
  2009): a text-logging LD_PRELOAD shim collected 15 GB in 10 hours, a Ruby script took
  another 10 hours to convert it (to a 7.8 GB file), and the replayer spent 86.7% of its
  time in fscanf, several hours per allocator; its results stayed "pending".  Here the
  trace is written as the program runs, needs no conversion, and the figures above are
  the whole cost of reading, checking and replaying it.
TXT
puts format("\nload average at the end: %s; a busy loop gets %.0f%% of a core",
            File.read('/proc/loadavg').split[0, 3].join(' '), core_share * 100)

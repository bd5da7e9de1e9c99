# vmheap-replay's bench (issue 31, `make bench-replay`): record two Ruby
# workloads of Ruby's own stdlib with vmheap-run --record, replay each
# under glibc, jemalloc, tcmalloc and mimalloc (RUNS times, medians), and
# print which allocator gives the lowest peak RSS and the fastest replay,
# by how much, and the replay rate under glibc (goal: 10M events/s).
#
# usage: ruby replay_bench.rb BUILD_DIR [RUNS]
#   BENCH_REPLAY_ROUNDS   rounds of bench/native_stdlib.rb (default 20)
#   BENCH_REPLAY_REQUESTS requests of bench/replay_rack.rb (default 5000)
require 'json'
require 'tmpdir'

build = File.expand_path(ARGV[0] || 'build')
runs = (ARGV[1] || 3).to_i
here = __dir__
run = File.join(build, 'bin/vmheap-run')
replay = File.join(build, 'bin/vmheap-replay')
rounds = ENV.fetch('BENCH_REPLAY_ROUNDS', '20')
requests = ENV.fetch('BENCH_REPLAY_REQUESTS', '5000')
ALLOCATORS = %w[glibc jemalloc tcmalloc mimalloc].freeze

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

def median(xs)
  s = xs.sort
  s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

def mib(b) = format('%.1f MiB', b / 1048576.0)

workloads = {
  'stdlib' => ['ruby', File.join(here, 'native_stdlib.rb'), rounds],
  'rack' => ['ruby', File.join(here, 'replay_rack.rb'), requests, '4']
}
dir = Dir.mktmpdir('vmheap-bench-replay')
at_exit { FileUtils.rm_rf(dir) }
require 'fileutils'
answers = {}
rate_rows = []
workloads.each do |name, cmd|
  trace = File.join(dir, "#{name}.trace")
  t0 = now
  system(run, '--record', trace, *cmd, out: File::NULL) or abort "bench-replay: recording #{name} failed"
  rec_wall = now - t0
  bytes = File.size(trace)
  rows = Hash.new { |h, k| h[k] = [] }
  one = Hash.new { |h, k| h[k] = [] }
  total_wall = []
  runs.times do
    [[rows, 'recorded'], [one, '1']].each do |acc, threads|
      t1 = now
      out = IO.popen([replay, '--format', 'json', '--threads', threads, trace], &:read)
      abort "bench-replay: vmheap-replay #{name} failed" unless $?.success?
      total_wall << now - t1 if threads == '1'
      JSON.parse(out).each { |r| acc[r['allocator']] << r }
    end
  end
  events = rows['glibc'][0]['ops']
  puts "== #{name}: #{cmd.join(' ')}"
  puts format('trace: %d bytes, %d events replayed, %.2f bytes/event; recorded in %.1f s (wall)',
              bytes, events, bytes.to_f / events, rec_wall)
  [[rows, 'recorded threads'], [one, 'one thread']].each do |acc, how|
    puts "-- replayed on #{how}, median of #{runs}:"
    puts '| allocator | seconds (wall) | CPU seconds | ns/event | peak RSS | RSS end | live peak | live end | frag. peak | frag. end |'
    puts '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |'
    ALLOCATORS.each do |a|
      rs = acc[a]
      next if rs.empty?

      m = ->(k) { median(rs.map { |r| r[k] }) }
      puts format('| %s | %.3f | %.3f | %.1f | %s | %s | %s | %s | %.3f | %.3f |', a, m.('seconds'),
                  m.('cpu_seconds'), m.('ns_per_op'), mib(m.('peak_rss')), mib(m.('rss_end')),
                  mib(rs[0]['live_bytes_peak']), mib(rs[0]['live_bytes_end']),
                  m.('fragmentation_peak'), m.('fragmentation_end'))
    end
  end
  med = ->(a, k) { median(rows[a].map { |r| r[k] }) }
  present = ALLOCATORS.reject { |a| rows[a].empty? }
  lo = present.min_by { |a| med.(a, 'peak_rss') }
  fast = present.min_by { |a| med.(a, 'seconds') }
  cfast = present.min_by { |a| med.(a, 'cpu_seconds') }
  answers[name] = [lo, fast, cfast]
  puts format('answer (%s): lowest peak RSS %s, %s (glibc %s: %.2fx); fastest replay (wall) %s, %.3f s ' \
              '(glibc %.3f s: %.2fx); least CPU %s, %.3f s (glibc %.3f s: %.2fx)',
              name, lo, mib(med.(lo, 'peak_rss')), mib(med.('glibc', 'peak_rss')),
              med.('glibc', 'peak_rss').to_f / med.(lo, 'peak_rss'), fast, med.(fast, 'seconds'),
              med.('glibc', 'seconds'), med.('glibc', 'seconds') / med.(fast, 'seconds'), cfast,
              med.(cfast, 'cpu_seconds'), med.('glibc', 'cpu_seconds'),
              med.('glibc', 'cpu_seconds') / med.(cfast, 'cpu_seconds'))
  g1 = one['glibc']
  wall_rate = events / median(g1.map { |r| r['seconds'] })
  cpu_rate = events / median(g1.map { |r| r['cpu_seconds'] })
  read = median(total_wall) - median(g1.map { |r| r['seconds'] }) * 4
  rate_rows << [name, wall_rate, cpu_rate]
  puts format('glibc replay rate (one thread): %.1fM events/s wall, %.1fM events/s CPU (goal 10M: %s)',
              wall_rate / 1e6, cpu_rate / 1e6, wall_rate >= 1e7 ? 'met' : 'NOT met')
  puts format('whole vmheap-replay --threads 1 (read, check, 4 children): %.2f s median; ' \
              'reading and checking the trace about %.2f s (%.0f MB/s)',
              median(total_wall), read, bytes / 1e6 / [read, 1e-3].max)
  puts
end
puts format('load average at the end: %s', File.read('/proc/loadavg').split[0, 3].join(' '))

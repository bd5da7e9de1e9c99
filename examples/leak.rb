# leak.rb - the Rubinius memory-analysis story, without ZeroMQ.
#
# A requester and a replier talk over a socket pair: the requester sends a
# message, the replier receives it, wraps it in a Message and answers.  The
# replier keeps every Message it ever received in an array, "to count them
# at the end" -- and so Message instances leak.  Every so often the program
# prints its mean round-trip latency, as the original did.
#
#   ruby -I build/ruby -rvmheap_agent examples/leak.rb [message-size] [rate]
#
# rate is the round trips per second it aims at (0: as fast as it can).
# Then, from another terminal:
#
#   vmheap-console -p PID -e 'set system.memory.dump heap1.vmheap'
#   ... a few seconds later ...
#   vmheap-console -p PID -e 'set system.memory.dump heap2.vmheap'
#   vmheap-diff heap1.vmheap heap2.vmheap
#
# The fix, as in the original: count the messages instead of keeping them.
require "socket"

# One received request.  The payload is interned (-string: one shared
# frozen copy for equal contents), so the leak is the Message objects.
class Message
  attr_reader :seq, :payload, :received_at

  def initialize(seq, payload)
    @seq = seq
    @payload = -payload
    @received_at = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end
end

message_size = (ARGV[0] || 256).to_i
rate = (ARGV[1] || 4000).to_i
report_every = 5000

request_socket, reply_socket = UNIXSocket.pair
payload = "a" * message_size
messages = []
seq = 0
roundtrip_time = 0.0
batch_start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
STDOUT.sync = true

loop do
  seq += 1
  sent_at = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  request_socket.write(payload)
  data = reply_socket.read(message_size)
  messages << Message.new(seq, data) # the leak: nothing ever drops these
  reply_socket.write("k")
  request_socket.read(1)
  roundtrip_time += Process.clock_gettime(Process::CLOCK_MONOTONIC) - sent_at

  if seq % report_every == 0
    latency = roundtrip_time * 1_000_000 / report_every / 2
    puts format("mean latency: %.3f [us]", latency)
    puts "received #{messages.size} messages"
    roundtrip_time = 0.0
  end
  # Pace the loop at about `rate` round trips per second.
  if rate > 0 && seq % 100 == 0
    ahead = batch_start + 100.0 / rate - Process.clock_gettime(Process::CLOCK_MONOTONIC)
    sleep(ahead) if ahead > 0
    batch_start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end
end

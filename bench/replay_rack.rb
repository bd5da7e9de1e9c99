# A Rack-style request loop for vmheap-replay's bench (issue 31, bench/
# replay_bench.rb), with Ruby's stdlib alone (no rack gem): a pool of
# worker threads, as Puma runs, takes requests from a queue; each request
# is a Rack env hash through a middleware chain (a logger, a cookie
# session, a router) to an app that parses the query and a JSON body and
# answers with ERB-rendered HTML or JSON, and a small cache keeps some
# answers alive between requests.
# usage: ruby replay_rack.rb [REQUESTS [THREADS]]
require 'json'
require 'erb'
require 'uri'
require 'stringio'
require 'logger'
require 'time'

requests = (ARGV[0] || 20_000).to_i
threads = (ARGV[1] || 4).to_i

PAGE = ERB.new(<<~HTML)
  <html><head><title><%= title %></title></head><body>
  <h1><%= ERB::Util.h(title) %></h1><ul>
  <% items.each do |it| %><li id="<%= it['id'] %>"><%= ERB::Util.h(it['name']) %> (<%= it['qty'] %>)</li>
  <% end %></ul><p>user <%= session['user'] %>, <%= Time.now.httpdate %></p></body></html>
HTML

class Logging
  def initialize(app, out) = (@app, @log = app, Logger.new(out))
  def call(env)
    status, headers, body = @app.call(env)
    @log.info("#{env['REQUEST_METHOD']} #{env['PATH_INFO']}?#{env['QUERY_STRING']} #{status} #{body.sum(&:bytesize)}")
    [status, headers, body]
  end
end

class Session
  def initialize(app) = @app = app
  def call(env)
    cookies = (env['HTTP_COOKIE'] || '').split(/;\s*/).to_h { |c| c.split('=', 2) }
    env['rack.session'] = { 'user' => cookies['user'] || 'anon', 'sid' => cookies['sid'] }
    status, headers, body = @app.call(env)
    headers['set-cookie'] = "sid=#{env['rack.session']['sid'] || rand(1 << 60).to_s(36)}; path=/"
    [status, headers, body]
  end
end

class App
  CACHE = {}
  LOCK = Mutex.new
  def call(env)
    params = URI.decode_www_form(env['QUERY_STRING']).to_h
    case env['PATH_INFO']
    when %r{\A/items/(\d+)\z}
      n = Regexp.last_match(1).to_i % 200 + 1
      items = (1..n).map { |i| { 'id' => i, 'name' => "item #{i} #{params['q']}", 'qty' => i * 3 } }
      title = "Items for #{params['q']}"
      session = env['rack.session']
      html = PAGE.result(binding)
      LOCK.synchronize do
        CACHE[params['q']] = html
        CACHE.shift while CACHE.size > 500
      end
      [200, { 'content-type' => 'text/html' }, [html]]
    when '/api/orders'
      order = JSON.parse(env['rack.input'].read)
      total = order['lines'].sum { |l| l['qty'] * l['price'] }
      [201, { 'content-type' => 'application/json' },
       [JSON.generate(order.merge('total' => total, 'at' => Time.now.iso8601))]]
    else
      [404, { 'content-type' => 'text/plain' }, ['not found']]
    end
  end
end

log = StringIO.new
app = Logging.new(Session.new(App.new), log)
queue = Queue.new
workers = (1..threads).map do
  Thread.new do
    while (env = queue.pop)
      _status, _headers, body = app.call(env)
      body.each(&:bytesize)
    end
  end
end
requests.times do |i|
  body = if i.odd?
           JSON.generate('customer' => "c#{i % 97}",
                         'lines' => (1..(i % 20 + 1)).map { |k| { 'sku' => "s#{k}", 'qty' => k, 'price' => k * 1.25 } })
         else
           ''
         end
  queue << {
    'REQUEST_METHOD' => i.odd? ? 'POST' : 'GET',
    'PATH_INFO' => i.odd? ? '/api/orders' : "/items/#{i}",
    'QUERY_STRING' => URI.encode_www_form('q' => "term#{i % 1000}", 'page' => i % 7),
    'HTTP_COOKIE' => "user=u#{i % 50}; sid=#{i.to_s(36)}",
    'HTTP_ACCEPT' => 'text/html,application/json',
    'rack.input' => StringIO.new(body)
  }
  log.truncate(0) if (i % 1000).zero?
end
threads.times { queue << nil }
workers.each(&:join)

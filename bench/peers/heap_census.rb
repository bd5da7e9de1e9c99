# bench/peers/heap_census.rb - per-class census of an ObjectSpace.dump_all
# file, shared by the Ruby peers histo.rb and diff.rb.
require "json"

module HeapCensus
	# One census: counts and bytes keyed by class name.
	Census = Struct.new(:counts, :bytes, :objects, :total_bytes)

	# Read a dump_all file line by line (heapy style: JSON.parse per line).
	# IMEMO lines count under their type: their "class" is the class they
	# cache (a method entry, a call cache), not their own.
	def self.read(path)
		names = {}                         # class address => name
		counts = Hash.new(0)               # class address or "(TYPE)" => n
		bytes = Hash.new(0)
		objects = 0
		total = 0
		File.foreach(path) do |line|
			obj = JSON.parse(line)
			type = obj["type"]
			next if type == "ROOT"
			if (type == "CLASS" || type == "MODULE") && obj["name"]
				names[obj["address"]] = obj["name"]
			end
			key = (type != "IMEMO" && obj["class"]) || "(#{type})"
			size = obj["memsize"] || 0
			counts[key] += 1
			bytes[key] += size
			objects += 1
			total += size
		end
		named_counts = Hash.new(0)
		named_bytes = Hash.new(0)
		counts.each do |key, n|
			name = names[key] || (key.start_with?("0x") ? "#<Class:#{key}>" : key)
			named_counts[name] += n
			named_bytes[name] += bytes[key]
		end
		Census.new(named_counts, named_bytes, objects, total)
	end

	def self.print_histogram(census, out = $stdout)
		rows = census.counts.sort_by { |name, n| [-n, name] }
		out.printf("%10s  %-40s %14s\n", "count", "class", "bytes")
		rows.each do |name, n|
			out.printf("%10d  %-40s %14d\n", n, name, census.bytes[name])
		end
		out.printf("%10d  %-40s %14d\n", census.objects,
			   "total (#{rows.size} classes)", census.total_bytes)
	end
end

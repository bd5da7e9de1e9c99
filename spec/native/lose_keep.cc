// lose_keep.cc - lose_keep.c's leaks through C++'s new and delete, for
// vmheap-run --output (spec/native_run_test.c):
//
//   lose_keep_cxx N
//
// lose_here() forgets N `Node`s made with new, keep_here() keeps N in a
// static array, churn_here() news and deletes N, and a global
// std::vector (destroyed at exit, after main) holds N more: only
// lose_here's are leaked at exit, keep_here's reachable, and neither
// churn_here's nor the vector's are live any more.
#include <cstdio>
#include <cstdlib>
#include <vector>

struct Node {
	long a, b, c;
	Node *next;
};

Node *kept[100000];
std::vector<Node *> global_nodes;

// Through a volatile store, so that no pointer outlives the loop in a
// register.
static Node *volatile sink;

__attribute__((noinline)) void lose_here(int n)
{
	for (int i = 0; i < n; i++)
		sink = new Node{1, 2, 3, nullptr};
	sink = nullptr;
}

__attribute__((noinline)) void keep_here(int n)
{
	for (int i = 0; i < n && i < 100000; i++)
		kept[i] = new Node{4, 5, 6, nullptr};
}

__attribute__((noinline)) void churn_here(int n)
{
	for (int i = 0; i < n; i++) {
		sink = new Node{7, 8, 9, nullptr};
		delete sink;
	}
	sink = nullptr;
}

struct Owner {
	~Owner()
	{
		for (Node *p : global_nodes)
			delete p;
	}
} owner;

__attribute__((noinline)) void global_here(int n)
{
	for (int i = 0; i < n; i++)
		global_nodes.push_back(new Node{0, 0, 0, nullptr});
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 1000;
	lose_here(n);
	keep_here(n);
	churn_here(n);
	global_here(n);
	return 0;
}

# tests/lib-trees.sh: corrupt BFS trees for the validators' tests (t0500 for
# kvalidate, t0650 for kbfs's validation on the device).  Source after lib.sh.
#
#   corrupt_trees DEP PAR EDG ROOT DIR
# DEP "v depth" and PAR "v parent" lines of a valid tree rooted at ROOT, EDG
# the graph as "u v" lines; writes DIR/rule-X-what.txt, each the tree with
# one line changed so that it breaks Graph500 rule X (named for the verdict).
corrupt_trees() {
	local dep=$1 par=$2 edg=$3 root=$4 dir=$5
	# a vertex at depth >= 2 gets the root as parent (not its neighbour)
	awk -v R="$root" 'FNR==1{f++} f==1{if (!x && $2>=2) {x=1; v=$1}; next} $1==v{$2=R} 1' "$dep" "$par" >"$dir/rule-c-nonneighbour.txt"
	# a vertex at depth 1 gets its depth-2 child as parent: a cycle of two
	awk 'FNR==1{f++} f==1{d[$1]=$2; next} f==2{if (!x && d[$1]==2) {x=1; v=$1; p=$2}; next} $1==p{$2=v} 1' \
		"$dep" "$par" "$par" >"$dir/rule-c-cycle.txt"
	# a leaf hangs under a neighbour of its own depth: depth +1, two levels below its old parent
	awk 'FNR==1{f++} f==1{d[$1]=$2; next} f==2{if ($1!=$2) kid[$2]=1; next}
	     f==3{if (!x && $1!=$2 && d[$1]>=1 && d[$1]==d[$2] && !($1 in kid)) {x=1; a=$1; b=$2}; next}
	     $1==a{$2=b} 1' "$dep" "$par" "$edg" "$par" >"$dir/rule-d-skipped-level.txt"
	# a reached leaf is marked unreached
	awk 'FNR==1{f++} f==1{d[$1]=$2; next} f==2{if ($1!=$2) kid[$2]=1; next}
	     f==3{if (!x && d[$1]>=1 && !($1 in kid)) {x=1; a=$1}; next} $1==a{$2=-1} 1' \
		"$dep" "$par" "$par" "$par" >"$dir/rule-e-unreached-in-component.txt"
	# an endpoint of an edge outside the root's component is hung under the root
	awk -v R="$root" 'FNR==1{f++} f==1{d[$1]=$2; next} f==2{if (!x && $1!=$2 && d[$1]==-1 && d[$2]==-1) {x=1; a=$2}; next}
	     $1==a{$2=R} 1' "$dep" "$edg" "$par" >"$dir/rule-e-reached-outside.txt"
	# the root's parent becomes one of its children
	awk -v R="$root" 'FNR==1{f++} f==1{if (!x && $2==R && $1!=R) {x=1; c=$1}; next} $1==R{$2=c} 1' \
		"$par" "$par" >"$dir/rule-b-root-parent.txt"
	awk -v R="$root" '$1==R{$2=-1} 1' "$par" >"$dir/rule-b-root-unreached.txt"
	awk -v R="$root" '$1!=R && $2!=-1 && !x {x=1; $2=1000000} 1' "$par" >"$dir/rule-a-parent-not-vertex.txt"
}

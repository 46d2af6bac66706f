"""Sums a heaptrack flamegraph file (heaptrack_print -F, cost type "leaked")
by the allocating mino function: live heap bytes per connection and the
biggest sites. usage: heap_summary.py STACKS CONNECTIONS"""
import collections,sys
path,n=sys.argv[1],int(sys.argv[2])
agg=collections.Counter(); total=0
skip=('(map.rs)','(mod.rs)','(rustc_entry.rs)','(set.rs)','(alloc.rs)','(raw_vec','(vec','(boxed.rs)','(bytes.rs)','(bytes_mut.rs)','(sync.rs)','(rc.rs)','(string.rs)','(spec_from','(iter.rs)','(slice.rs)','(collect','(extend','(clone.rs)','(function.rs)')
for line in open(path):
    stack,_,cost=line.rstrip().rpartition(' ')
    try: cost=int(cost)
    except: continue
    total+=cost
    frames=[f for f in stack.split(';') if f.strip()]
    j=len(frames)-1
    while j>0 and (any(x in frames[j] for x in skip) or 'mino' not in frames[j] and '(' in frames[j] and not frames[j].split('(')[-1].startswith(('hub','conn','outbox','local','aoi','links','sim','cells','viewers','mod.rs','socket','task','names','ws_frame','tick','shard','frames','http','registry','presence','metrics','output','batch','liveness'))):
        j-=1
    agg[frames[j].split(' (')[0][-50:]+' ('+frames[j].split('(')[-1]]+=cost
print(f"total {total/n:.0f} B/conn")
for k,v in agg.most_common(14): print(f"{v/n:8.0f} B/conn  {k}")

#!/usr/bin/env python3
"""Where a contest run's CPU goes in phase 1, from `perf record -k CLOCK_REALTIME -g` of its JVM.

usage: perf-buckets.py perf.data FROM TO
  FROM, TO: the phase-1 window `contest` prints ("phase 1 from ... to ..."), ISO-8601 UTC.
Run the JVM with -XX:+UnlockDiagnosticVMOptions -XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit
so that perf walks and names the JIT-compiled frames. Each sample is given a role by the first
thread-body frame on its stack (log writer, log completer, producers) and a bucket by the frame
nearest its leaf that matches one; shares are of all the process's samples in the window (the
sampling rate is fixed, so a share is CPU time). Samples whose stack perf could not walk into
Java land in "other".
"""
import sys,subprocess,re,collections
import datetime
lo=hi=None
if len(sys.argv)>3:
    lo=datetime.datetime.fromisoformat(sys.argv[2].replace('Z','+00:00')).timestamp(); hi=datetime.datetime.fromisoformat(sys.argv[3].replace('Z','+00:00')).timestamp()
out=subprocess.run(['perf','script','-i',sys.argv[1],'-F','comm,tid,time,ip,sym'],capture_output=True,text=True).stdout
samples=[];cur=None
for l in out.splitlines():
    if not l.strip():
        if cur: samples.append(cur); cur=None
        continue
    if not l.startswith((' ','\t')):
        f0=l.split(); t=float([x for x in f0 if re.match(r'^\d+\.\d+:$',x)][0][:-1])
        cur=[re.sub(r'[-#]?\d+$','',f0[0]),[]] if (lo is None or lo<=t<=hi) else None
    elif cur is not None:
        parts=l.strip().split(None,1)
        cur[1].append(re.sub(r'\(.*','',(parts[1] if len(parts)>1 else '?')).split()[-1])
if cur: samples.append(cur)
n=len(samples)
def role(s):
    fr=s[1]
    for f in fr:
        if 'BatchWriter.run' in f: return 'log writer'
        if 'Completer.run' in f: return 'log completer'
        if 'ContestEval$Producer.run' in f: return 'producers'
        if 'CacheManager' in f: return 'cache manager'
    if s[0]=='streamcache-log': return 'log completer'
    if s[0]=='contest': return 'producers'
    return s[0]
roles=collections.Counter(role(s) for s in samples)
# C: the JIT compiler threads; GC, G: the collector's
print('samples',n,'(phase-1 window)' if lo else '')
for k,v in roles.most_common(10): print('%6.1f%% %s'%(100*v/n,k))
# buckets: for each role, first matching frame (from leaf upward) in a list of named buckets
buckets=[('futex wake (unpark)',['futex_wake','try_to_wake_up','Unsafe.unpark']),('park / context switch',['Unsafe.park','futex_wait','finish_task_switch','__schedule']),
 ('fdatasync',['ext4_sync_file','file_write_and_wait','do_fsync','FileDispatcherImpl.force','force0']),('pwrite',['ext4_buffered_write','vfs_write','ksys_pwrite','pwrite0']),
 ('CRC32C',['CRC32C']),
 ('queue creation',['ensureCreated']),('eviction scan',['EvictionPasses','GenerationLists','SegmentEviction','SegmentsByGeneration']),
 ('commit into cache',['LogCommits.committed']),('location index',['LocationFeed','LocationTable','LocationRows']),
 ('heap buffer (evaluator)',['ByteBuffer.allocate','HeapByteBuffer.<init>']),('fill/check (evaluator)',['MqMessages']),
 ('page fault',['exc_page_fault','asm_exc_page_fault']),('getRange',['getRange','doGetRange']),
 ('append (producer, rest)',['MessageQueueStore.append','doAppend']),('writer (rest)',['BatchWriter']),('completer (rest)',['Completer'])]
for r,_ in roles.most_common(4):
    if r in ('C','java','GC'): continue
    ss=[s for s in samples if role(s)==r]
    c=collections.Counter()
    for s in ss:
        b='other'
        if s[1] and s[1][0].startswith('StubRoutines'): c['leaf stub (CRC32C, arraycopy)']+=1; continue
        for f in s[1]:
            hit=None
            for name,keys in buckets:
                if any(k in f for k in keys): hit=name;break
            if hit: b=hit;break
        c[b]+=1
    print('== %s %.1f%%'%(r,100*len(ss)/n))
    for k,v in c.most_common(12): print('   %5.1f%% %s'%(100*v/n,k))

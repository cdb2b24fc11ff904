package yarnam.flinkjob;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * yarn-am's Flink test job (docs/flink.md#the-test-job). The first argument picks the mode:
 *
 * <ul>
 *   <li>{@code gpu [parallelism]}: bounded; every subtask asks its RuntimeContext for the "gpu"
 *       external resource (FLIP-108) and prints one line {@code YARN_AM_FLINK_GPU subtask=I
 *       container=C indexes=A,B} to its TaskManager's stdout, then the job finishes.
 *   <li>{@code fail}: bounded; a subtask throws an IllegalStateException whose message starts with
 *       {@code yarn-am-flink-test deliberate failure}; restarts are off, so the job fails.
 *       (Restarts are off in the bounded modes; the stream mode uses the cluster's strategy.)
 *   <li>{@code stream}: unbounded, for reactive-mode rescaling; every subtask prints {@code
 *       YARN_AM_FLINK_PARALLELISM subtask=I parallelism=P container=C} when it opens.
 *   <li>{@code counter}: unbounded and stateful, for checkpoints and restores; one subtask counts
 *       the records it sees (about 100 a second) in operator state, prints {@code
 *       YARN_AM_FLINK_COUNTER restored=N container=C} when it starts ({@code restored=none} without
 *       a checkpoint to restore) and {@code YARN_AM_FLINK_COUNTER count=N container=C} every 20
 *       records. The records a restore lost are the last count printed before the failure minus
 *       the count restored. Checkpointing is the job configuration's ({@code
 *       execution.checkpointing.interval}); it takes the cluster's restart strategy.
 *   <li>{@code relay}: unbounded and as fast as it goes; the source's records are rebalanced to
 *       the map's subtasks, so with a parallelism of 2 on two TaskManagers half of them cross from
 *       one to the other through Flink's data exchange. Every map subtask prints {@code
 *       YARN_AM_FLINK_RELAY subtask=I records=N seconds=S container=C} about every 2 seconds: the
 *       records it received since it opened and the seconds since its first one.
 *   <li>{@code gpubound}: unbounded; a sequence source paced to about 50 records a second per
 *       subtask is rebalanced to a map named "GPU stand-in" that costs nothing: its task is idle
 *       between records, as an operator whose work runs on a GPU looks to Flink.
 *   <li>{@code rated RATEFILE [COST_US]}: unbounded; one source subtask named "rated" emits
 *       records of about 1 KB at the rates RATEFILE holds (any scheme Flink's {@code FileSystem}
 *       reaches, e.g. hdfs://): lines {@code SINCE_MS RATE}, from unix time SINCE_MS on RATE records
 *       a second, re-read every second (at most 4096 bytes; a missing file is nothing due, a bad one
 *       keeps the rates last read). Its {@code pendingRecords} is the records due by now minus those
 *       it emitted: its backlog when the job cannot take them, which a rescale's restore keeps (the
 *       position is checkpointed every 2 s). The records are rebalanced to a map named "Cost" that
 *       sleeps COST_US microseconds a record (default 4000: 250 records a second a subtask), then
 *       discarded. Every Cost subtask prints {@code YARN_AM_FLINK_PARALLELISM} as in stream mode.
 *   <li>{@code fs DIR}: bounded; user code writes a file through Flink's {@code FileSystem} into
 *       DIR (any scheme Flink reaches, e.g. hdfs://) and reads it back, twice: the program's main
 *       (in the JobManager) writes {@code DIR/main} and the one subtask (in a TaskManager) {@code
 *       DIR/operator}, each holding and printing {@code YARN_AM_FLINK_FS wrote=URI container=C}.
 * </ul>
 *
 * The container is the CONTAINER_ID environment variable (YARN sets it in every container), else
 * the process id.
 */
public final class Job {
    static final String FAILURE = "yarn-am-flink-test deliberate failure";

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "gpu";
        Configuration conf = new Configuration();
        if (!mode.equals("stream") && !mode.equals("counter") && !mode.equals("relay") && !mode.equals("gpubound")
                && !mode.equals("rated")) {
            // A bounded mode's failure must fail the job at once; the stream mode takes the cluster's
            // restart strategy, which reactive mode needs to survive a lost TaskManager.
            conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        switch (mode) {
            case "gpu": {
                int parallelism = args.length > 1 ? Integer.parseInt(args[1]) : env.getParallelism();
                env.fromSequence(0, parallelism - 1)
                        .setParallelism(parallelism)
                        .rebalance()
                        .map(new GpuProbe())
                        .setParallelism(parallelism)
                        .sinkTo(new DiscardingSink<>())
                        .setParallelism(parallelism);
                env.execute("yarn-am-flink-test gpu");
                break;
            }
            case "fail":
                env.fromSequence(0, 9).map(new Fail()).sinkTo(new DiscardingSink<>());
                env.execute("yarn-am-flink-test fail");
                break;
            case "stream":
                env.fromSequence(0, Long.MAX_VALUE)
                        .map(new Slow())
                        .sinkTo(new DiscardingSink<>());
                env.execute("yarn-am-flink-test stream");
                break;
            case "counter":
                env.fromSequence(0, Long.MAX_VALUE)
                        .setParallelism(1)
                        .map(new Counter())
                        .setParallelism(1)
                        .sinkTo(new DiscardingSink<>())
                        .setParallelism(1);
                env.execute("yarn-am-flink-test counter");
                break;
            case "gpubound":
                env.fromSequence(0, Long.MAX_VALUE)
                        .map(new Pace())
                        .rebalance()
                        .map(new Pass())
                        .name("GPU stand-in")
                        .sinkTo(new DiscardingSink<>());
                env.execute("yarn-am-flink-test gpubound");
                break;
            case "relay":
                env.fromSequence(0, Long.MAX_VALUE)
                        .rebalance()
                        .map(new Relay())
                        .sinkTo(new DiscardingSink<>());
                env.execute("yarn-am-flink-test relay");
                break;
            case "rated": {
                if (args.length < 2) {
                    throw new IllegalArgumentException("mode rated needs a rate file: rated RATEFILE [COST_US]");
                }
                long costMicros = args.length > 2 ? Long.parseLong(args[2]) : 4000;
                if (costMicros < 1 || costMicros > 1_000_000) {
                    throw new IllegalArgumentException("mode rated: COST_US " + args[2] + " is not within 1..1000000");
                }
                // One source subtask: its sequence position is the records emitted, checkpointed
                // every 2 s, so that a rescale's restore keeps the backlog.
                env.enableCheckpointing(2000);
                DataGeneratorSource<String> source =
                        new DataGeneratorSource<>(
                                new Backlog(), Long.MAX_VALUE, new FileRate(args[1]), Types.STRING);
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "rated")
                        .setParallelism(1)
                        .setMaxParallelism(1)
                        .rebalance()
                        .map(new Cost(costMicros))
                        .name("Cost")
                        .sinkTo(new DiscardingSink<>());
                env.execute("yarn-am-flink-test rated");
                break;
            }
            case "fs": {
                if (args.length < 2) {
                    throw new IllegalArgumentException("mode fs needs a directory: fs DIR");
                }
                String dir = args[1];
                writeAndRead(new Path(dir, "main"));
                env.fromSequence(0, 0)
                        .setParallelism(1)
                        .map(new FsWriter(dir))
                        .setParallelism(1)
                        .sinkTo(new DiscardingSink<>())
                        .setParallelism(1);
                env.execute("yarn-am-flink-test fs");
                break;
            }
            default:
                throw new IllegalArgumentException(
                        "unknown mode " + mode + ": want gpu, fail, stream, counter, relay, gpubound, rated or fs");
        }
    }

    static String container() {
        String id = System.getenv("CONTAINER_ID");
        return id != null && !id.isEmpty() ? id : "pid-" + ProcessHandle.current().pid();
    }

    /**
     * Writes a line naming the file and this container to path through Flink's FileSystem, reads it
     * back, and prints it; a file that does not read back as written is an IOException.
     */
    static void writeAndRead(Path path) throws IOException {
        String line = "YARN_AM_FLINK_FS wrote=" + path + " container=" + container();
        byte[] want = line.getBytes(StandardCharsets.UTF_8);
        FileSystem fs = path.getFileSystem();
        try (FSDataOutputStream out = fs.create(path, FileSystem.WriteMode.OVERWRITE)) {
            out.write(want);
        }
        byte[] got = new byte[want.length + 1];
        int n = 0;
        try (FSDataInputStream in = fs.open(path)) {
            for (int r; n < got.length && (r = in.read(got, n, got.length - n)) > 0; ) {
                n += r;
            }
        }
        String read = new String(got, 0, n, StandardCharsets.UTF_8);
        if (!read.equals(line)) {
            throw new IOException(path + " reads back " + read + ", not " + line);
        }
        System.out.println(line);
        System.out.flush();
    }

    /** Writes DIR/operator through Flink's FileSystem from a TaskManager (writeAndRead). */
    static final class FsWriter extends RichMapFunction<Long, Long> {
        private final String dir;

        FsWriter(String dir) {
            this.dir = dir;
        }

        @Override
        public void open(OpenContext ctx) throws IOException {
            writeAndRead(new Path(dir, "operator"));
        }

        @Override
        public Long map(Long value) {
            return value;
        }
    }

    /** Prints the GPU indexes its TaskManager got through the RuntimeContext. */
    static final class GpuProbe extends RichMapFunction<Long, Long> {
        @Override
        public void open(OpenContext ctx) {
            Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos("gpu");
            List<String> indexes = new ArrayList<>();
            for (ExternalResourceInfo info : infos) {
                indexes.add(info.getProperty("index").orElse("?"));
            }
            Collections.sort(indexes);
            System.out.println(
                    "YARN_AM_FLINK_GPU subtask="
                            + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask()
                            + " container="
                            + container()
                            + " indexes="
                            + String.join(",", indexes));
            System.out.flush();
        }

        @Override
        public Long map(Long value) {
            return value;
        }
    }

    /** Fails on the first record. */
    static final class Fail extends RichMapFunction<Long, Long> {
        @Override
        public Long map(Long value) {
            throw new IllegalStateException(
                    FAILURE
                            + " in subtask "
                            + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
        }
    }

    /** Slows the unbounded stream down and logs the parallelism it runs at. */
    static final class Slow extends RichMapFunction<Long, Long> {
        @Override
        public void open(OpenContext ctx) {
            System.out.println(
                    "YARN_AM_FLINK_PARALLELISM subtask="
                            + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask()
                            + " parallelism="
                            + getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks()
                            + " container="
                            + container());
            System.out.flush();
        }

        @Override
        public Long map(Long value) throws InterruptedException {
            Thread.sleep(10);
            return value;
        }
    }

    /** Paces the source: 20 ms a record, about 50 records a second per subtask. */
    static final class Pace extends RichMapFunction<Long, Long> {
        @Override
        public Long map(Long value) throws InterruptedException {
            Thread.sleep(20);
            return value;
        }
    }

    /**
     * Passes each record on at no cost, so Flink sees its task idle between records, as it sees an
     * operator whose work runs on a GPU; the test makes its TaskManager's GPU read busy.
     */
    static final class Pass extends RichMapFunction<Long, Long> {
        @Override
        public Long map(Long value) {
            return value;
        }
    }

    /** Counts the records it receives and prints the count about every 2 seconds. */
    static final class Relay extends RichMapFunction<Long, Long> {
        private long records;
        private long first;
        private long printed;

        @Override
        public Long map(Long value) {
            long now = System.nanoTime();
            if (records++ == 0) {
                first = now;
                printed = now;
            }
            if (now - printed >= 2_000_000_000L) {
                printed = now;
                System.out.println(
                        "YARN_AM_FLINK_RELAY subtask="
                                + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask()
                                + " records="
                                + records
                                + " seconds="
                                + String.format("%.3f", (now - first) / 1e9)
                                + " container="
                                + container());
                System.out.flush();
            }
            return value;
        }
    }

    /** Counts the records it sees in checkpointed operator state and prints the count. */
    static final class Counter extends RichMapFunction<Long, Long> implements CheckpointedFunction {
        private transient ListState<Long> state;
        private long count;

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            state =
                    ctx.getOperatorStateStore()
                            .getListState(new ListStateDescriptor<>("count", Long.class));
            String restored = "none";
            if (ctx.isRestored()) {
                for (Long c : state.get()) {
                    count += c;
                }
                restored = Long.toString(count);
            }
            System.out.println(
                    "YARN_AM_FLINK_COUNTER restored=" + restored + " container=" + container());
            System.out.flush();
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            state.update(Collections.singletonList(count));
        }

        @Override
        public Long map(Long value) throws InterruptedException {
            Thread.sleep(10);
            count++;
            if (count % 20 == 0) {
                System.out.println("YARN_AM_FLINK_COUNTER count=" + count + " container=" + container());
                System.out.flush();
            }
            return value;
        }
    }

    /**
     * The rated mode's pacing: the rate limiter of the one source subtask lets the next record
     * through once it is due. The records due are the job's rate over time from RATEFILE (Rates),
     * those emitted the source's position in its sequence, which a restore (a rescale) takes from
     * the last checkpoint: the backlog outlives a restart, as a message queue's would. A record not
     * due yet completes its future when it is; the task is idle meanwhile, so the source's busy time
     * stays low.
     */
    @SuppressWarnings({"rawtypes", "serial"})
    static final class FileRate implements RateLimiterStrategy {
        private final String file;

        FileRate(String file) {
            this.file = file;
        }

        @Override
        public RateLimiter createRateLimiter(int parallelism) {
            Pacer p = new Pacer(file);
            // Backlog.open runs later in the same task thread: it tells the pacer what is emitted.
            Pacer.CREATED.set(p);
            return p;
        }
    }

    /** The rate limiter of the source subtask (FileRate). */
    @SuppressWarnings("rawtypes")
    static final class Pacer implements RateLimiter {
        static final ThreadLocal<Pacer> CREATED = new ThreadLocal<>();

        private final Path file;
        private final ScheduledExecutorService timer;
        private volatile long[] since = new long[0]; // unix ms of each rate, ascending
        private volatile double[] rates = new double[0]; // records a second from since[i]
        volatile long emitted; // records emitted, the restored position included

        Pacer(String file) {
            this.file = new Path(file);
            this.timer =
                    Executors.newSingleThreadScheduledExecutor(
                            r -> {
                                Thread t = new Thread(r, "yarn-am-flink-test rate");
                                t.setDaemon(true);
                                return t;
                            });
            timer.scheduleWithFixedDelay(this::readRates, 0, 1, TimeUnit.SECONDS);
        }

        /**
         * Reads RATEFILE, lines of "SINCE_MS RATE" (from unix time SINCE_MS on, RATE records a
         * second), at most 4096 bytes; a missing or bad file keeps the rates last read.
         */
        private void readRates() {
            try {
                FileSystem fs = file.getFileSystem();
                byte[] b = new byte[4096];
                int n = 0;
                try (FSDataInputStream in = fs.open(file)) {
                    for (int r; n < b.length && (r = in.read(b, n, b.length - n)) > 0; ) {
                        n += r;
                    }
                }
                String[] lines = new String(b, 0, n, StandardCharsets.UTF_8).trim().split("\n");
                long[] s = new long[lines.length];
                double[] r = new double[lines.length];
                for (int i = 0; i < lines.length; i++) {
                    String[] f = lines[i].trim().split("\\s+");
                    s[i] = Long.parseLong(f[0]);
                    r[i] = Double.parseDouble(f[1]);
                    if (r[i] < 0 || r[i] >= 1e9 || (i > 0 && s[i] < s[i - 1])) {
                        return;
                    }
                }
                rates = r;
                since = s;
            } catch (Exception e) {
                // Keep the last good rates; a missing file is nothing due yet.
            }
        }

        /** The records due by now: the rates integrated from the first line's time. */
        double due() {
            long[] s = since;
            double[] r = rates;
            long now = System.currentTimeMillis();
            double due = 0;
            for (int i = 0; i < s.length && s[i] < now; i++) {
                long end = i + 1 < s.length ? Math.min(s[i + 1], now) : now;
                due += r[i] * (end - s[i]) / 1000.0;
            }
            return due;
        }

        /** The records due and not emitted yet. */
        long backlog() {
            return Math.max(0, (long) due() - emitted);
        }

        @Override
        public CompletionStage<Void> acquire() {
            return acquire(1);
        }

        // Flink 2.x asks for a batch; 1.20 calls acquire() per record.
        public CompletionStage<Void> acquire(int records) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            await(f, records);
            return f;
        }

        /** Completes f once records more are due, checking every 2 ms. */
        private void await(CompletableFuture<Void> f, int records) {
            if (due() >= emitted + records) {
                f.complete(null);
                return;
            }
            timer.schedule(() -> await(f, records), 2, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * The rated source's records, about 1 KB each (so that few of them fill Flink's network
     * buffers); tells its pacer the position reached and registers its backlog as pendingRecords.
     */
    static final class Backlog implements GeneratorFunction<Long, String> {
        private static final String PAD = new String(new char[1000]).replace('\0', 'x');
        private transient Pacer pacer;

        @Override
        public void open(SourceReaderContext ctx) {
            pacer = Pacer.CREATED.get();
            Pacer.CREATED.remove();
            if (pacer == null) {
                throw new IllegalStateException("rated: no rate limiter created in this task's thread");
            }
            ctx.metricGroup().setPendingRecordsGauge(pacer::backlog);
        }

        @Override
        public String map(Long value) {
            pacer.emitted = value + 1;
            return PAD;
        }
    }

    /**
     * Costs a fixed time a record, asleep: records come no faster than one a cost per subtask. Time
     * it overslept is made up by the next records (at most 5 ms of it), time it waited for records
     * is not.
     */
    static final class Cost extends RichMapFunction<String, String> {
        private final long costNanos;
        private transient long until;

        Cost(long costMicros) {
            this.costNanos = costMicros * 1000;
        }

        @Override
        public void open(OpenContext ctx) {
            System.out.println(
                    "YARN_AM_FLINK_PARALLELISM subtask="
                            + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask()
                            + " parallelism="
                            + getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks()
                            + " container="
                            + container());
            System.out.flush();
        }

        @Override
        public String map(String value) {
            long now = System.nanoTime();
            until = Math.max(until, now - 5_000_000L) + costNanos;
            for (long left = until - now; left > 0; left = until - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
            return value;
        }
    }
}

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

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

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
        if (!mode.equals("stream") && !mode.equals("counter") && !mode.equals("relay") && !mode.equals("gpubound")) {
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
                        "unknown mode " + mode + ": want gpu, fail, stream, counter, relay, gpubound or fs");
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
}

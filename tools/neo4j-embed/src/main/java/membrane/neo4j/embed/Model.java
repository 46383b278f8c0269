package membrane.neo4j.embed;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.io.IOException;
import java.io.InputStream;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.neo4j.logging.Log;

/**
 * all-MiniLM-L6-v2 (sentence-transformers, int8-quantized ONNX, from the langchain4j model jar)
 * with batched inference: the texts of a call are tokenized together, sorted by length and run
 * through ONNX Runtime as padded tensors of up to {@link #CHUNK} texts and {@link #RUN_TOKENS}
 * tokens, then mean-pooled over their tokens and L2-normalised. One instance per JVM
 * ({@link #get}), safe for concurrent use.
 *
 * <p>The model's int8 activations are scaled per run, over all its texts: a text's vector moves a
 * little with its batch mates (cosine about 0.99 to the text embedded alone), as far as the
 * quantized model is from the full-precision one either way (measured: 0.990 alone, 0.990 in
 * batches, against the fp32 model's vectors).
 */
final class Model {
    /** The model's name, which Membrane stores beside each vector. */
    static final String NAME = "all-minilm-l6-v2-q";

    static final int DIMENSIONS = 384;

    /**
     * Tokens read per text, [CLS] and [SEP] included: sentence-transformers' max_seq_length for
     * this model. The rest of a longer text is ignored (the model was trained on 128 tokens).
     */
    static final int MAX_TOKENS = 256;

    /**
     * Characters of a text given to the tokenizer: 256 tokens are far fewer, and the tokenizer
     * reads the whole text before truncating, so a huge text would only cost time.
     */
    static final int MAX_CHARS = 32_768;

    /**
     * Texts per ONNX Runtime run at most. Sorted by length, the texts of a run need little padding.
     * Measured on 2 cores with short texts: 16 is 20% slower than 32; 32, 64 and 128 are alike.
     */
    static final int CHUNK = Integer.getInteger("membrane.embed.chunk", 32);

    /**
     * Tokens (texts x padded length) per run at most, which bounds its memory: attention takes
     * texts x 12 heads x length² floats, 100 MB for 32 texts of 256 tokens, and ONNX Runtime's
     * arena keeps its peak. Short texts (about 25 tokens) still run 32 at a time; 256-token
     * texts 4 at a time, which is work enough per run for the cores.
     */
    static final int RUN_TOKENS = Integer.getInteger("membrane.embed.runTokens", 1024);

    private static final Object LOCK = new Object();
    private static volatile Model instance;

    private final OrtEnvironment env;
    private final OrtSession session;
    private final HuggingFaceTokenizer tokenizer;
    private final boolean typeIds;

    /**
     * The model, loaded on first use (about half a second: the ONNX session and the tokenizer's
     * native library), which is logged to log (Neo4j's debug.log; when not null). A failed load
     * is retried on the next call, each failing with its cause.
     */
    static Model get(Log log) {
        Model m = instance;
        if (m != null) {
            return m;
        }
        synchronized (LOCK) {
            if (instance == null) {
                long t0 = System.nanoTime();
                // DJL finds its native library's version file through the thread's context class
                // loader, which in Neo4j is the server's, not the plugin jar's: standalone it works,
                // inside Neo4j it failed with "No tokenizers version found in property file".
                Thread th = Thread.currentThread();
                ClassLoader tccl = th.getContextClassLoader();
                th.setContextClassLoader(Model.class.getClassLoader());
                try {
                    instance = new Model();
                } catch (OrtException | IOException | RuntimeException | LinkageError e) {
                    if (log != null) {
                        log.error("membrane.embed: cannot load the model " + NAME, e);
                    }
                    throw new IllegalStateException("membrane.embed: cannot load the model " + NAME + ": " + e, e);
                } finally {
                    th.setContextClassLoader(tccl);
                }
                if (log != null) {
                    log.info("membrane.embed: model %s loaded in %d ms", NAME, (System.nanoTime() - t0) / 1_000_000);
                }
            }
            return instance;
        }
    }

    private Model() throws OrtException, IOException {
        env = OrtEnvironment.getEnvironment();
        OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
        opts.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
        // One run uses every core (inference is all there is to a call); parallel calls share them.
        opts.setIntraOpNumThreads(Integer.getInteger("membrane.embed.threads", Runtime.getRuntime().availableProcessors()));
        opts.setInterOpNumThreads(1);
        // Memory: ONNX Runtime's arena stays (without it, malloc's per-thread arenas held more:
        // Neo4j runs each call on whichever Bolt thread), and RUN_TOKENS bounds what it grows to.
        // Memory patterns (buffers planned per input shape) are off: every run has another shape,
        // and with them the process kept 45 MB more after long texts, for no measurable speed.
        opts.setMemoryPatternOptimization(Boolean.getBoolean("membrane.embed.memoryPattern"));
        if (!Boolean.getBoolean("membrane.embed.spin")) {
            // ONNX Runtime's pool threads spin-wait after a run by default, burning the cores that
            // the rest of Neo4j (the writes beside the embedding) needs; not spinning measured the
            // same embedding throughput.
            opts.addConfigEntry("session.intra_op.allow_spinning", "0");
        }
        session = env.createSession(resource("all-minilm-l6-v2-q.onnx"), opts);
        typeIds = session.getInputNames().contains("token_type_ids");
        Map<String, String> tok = new HashMap<>();
        tok.put("padding", "false"); // padded here, per run, to the run's longest text
        tok.put("truncation", "true");
        tok.put("maxLength", Integer.toString(MAX_TOKENS));
        tok.put("addSpecialTokens", "true");
        try (InputStream in = Model.class.getResourceAsStream("/all-minilm-l6-v2-q-tokenizer.json")) {
            if (in == null) {
                throw new IOException("all-minilm-l6-v2-q-tokenizer.json is not in the plugin jar");
            }
            tokenizer = HuggingFaceTokenizer.newInstance(in, tok);
        }
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = Model.class.getResourceAsStream("/" + name)) {
            if (in == null) {
                throw new IOException(name + " is not in the plugin jar");
            }
            return in.readAllBytes();
        }
    }

    /**
     * One unit vector of {@link #DIMENSIONS} numbers per text, in order. Texts must not be null.
     * {@code between} runs between chunks (the transaction's termination check).
     */
    float[][] embed(List<String> texts, Runnable between) throws OrtException {
        int n = texts.size();
        float[][] out = new float[n][];
        if (n == 0) {
            return out;
        }
        String[] in = new String[n];
        for (int i = 0; i < n; i++) {
            in[i] = cut(texts.get(i));
        }
        Encoding[] enc = tokenizer.batchEncode(in);
        // Shortest first: the texts of a run are of similar length, so padding wastes little.
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Integer.compare(enc[a].getIds().length, enc[b].getIds().length));
        for (int from = 0, to; from < n; from = to) {
            if (from > 0) {
                between.run();
            }
            // Sorted, so the last text of a run is its longest: grow while the padded run fits.
            to = from + 1;
            while (to < n && to - from < CHUNK && (to - from + 1) * enc[order[to]].getIds().length <= RUN_TOKENS) {
                to++;
            }
            run(enc, Arrays.copyOfRange(order, from, to), out);
        }
        return out;
    }

    /** Runs the texts idx of enc as one batch and writes their vectors into out. */
    private void run(Encoding[] enc, Integer[] idx, float[][] out) throws OrtException {
        int b = idx.length;
        int len = 0;
        for (int i : idx) {
            len = Math.max(len, enc[i].getIds().length);
        }
        long[] ids = new long[b * len];
        long[] mask = new long[b * len];
        long[] types = new long[b * len];
        for (int r = 0; r < b; r++) {
            Encoding e = enc[idx[r]];
            long[] id = e.getIds();
            System.arraycopy(id, 0, ids, r * len, id.length);
            System.arraycopy(e.getAttentionMask(), 0, mask, r * len, id.length);
            System.arraycopy(e.getTypeIds(), 0, types, r * len, id.length);
        }
        long[] shape = {b, len};
        Map<String, OnnxTensor> inputs = new HashMap<>();
        List<OnnxTensor> tensors = new ArrayList<>(3);
        try {
            tensors.add(OnnxTensor.createTensor(env, LongBuffer.wrap(ids), shape));
            inputs.put("input_ids", tensors.get(0));
            tensors.add(OnnxTensor.createTensor(env, LongBuffer.wrap(mask), shape));
            inputs.put("attention_mask", tensors.get(1));
            if (typeIds) {
                tensors.add(OnnxTensor.createTensor(env, LongBuffer.wrap(types), shape));
                inputs.put("token_type_ids", tensors.get(2));
            }
            try (OrtSession.Result res = session.run(inputs)) {
                // last_hidden_state: [b, len, 384]
                FloatBuffer h = ((OnnxTensor) res.get(0)).getFloatBuffer();
                for (int r = 0; r < b; r++) {
                    out[idx[r]] = meanPool(h, mask, r, len);
                }
            }
        } finally {
            for (OnnxTensor t : tensors) {
                t.close();
            }
        }
    }

    /** The mean of row r's unmasked token vectors, L2-normalised. */
    private static float[] meanPool(FloatBuffer h, long[] mask, int r, int len) {
        double[] sum = new double[DIMENSIONS];
        int tokens = 0;
        for (int t = 0; t < len; t++) {
            if (mask[r * len + t] == 0) {
                continue;
            }
            tokens++;
            int base = (r * len + t) * DIMENSIONS;
            for (int d = 0; d < DIMENSIONS; d++) {
                sum[d] += h.get(base + d);
            }
        }
        double norm = 0;
        for (int d = 0; d < DIMENSIONS; d++) {
            sum[d] /= Math.max(tokens, 1);
            norm += sum[d] * sum[d];
        }
        norm = Math.sqrt(norm);
        float[] v = new float[DIMENSIONS];
        for (int d = 0; d < DIMENSIONS; d++) {
            v[d] = (float) (norm > 0 ? sum[d] / norm : 0);
        }
        return v;
    }

    /** s cut to MAX_CHARS, not inside a surrogate pair. */
    private static String cut(String s) {
        if (s.length() <= MAX_CHARS) {
            return s;
        }
        int n = MAX_CHARS;
        if (Character.isHighSurrogate(s.charAt(n - 1))) {
            n--;
        }
        return s.substring(0, n);
    }
}

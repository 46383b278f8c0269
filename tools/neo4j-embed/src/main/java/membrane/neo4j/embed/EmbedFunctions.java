package membrane.neo4j.embed;

import ai.onnxruntime.OrtException;
import java.util.ArrayList;
import java.util.List;
import org.neo4j.logging.Log;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.TerminationGuard;
import org.neo4j.procedure.UserFunction;

/**
 * Membrane's embedding functions: all-MiniLM-L6-v2 (quantized, 384 dimensions) inside Neo4j, so
 * that the server embeds through its Bolt connection (internal/neo4j's Embedder) with no
 * embedding service beside it.
 *
 * <pre>
 * RETURN membrane.embed(['first text', 'second text']) AS vectors, membrane.embedModel() AS model
 * </pre>
 */
public class EmbedFunctions {
    /** Lets a call stop between batches once its transaction is terminated or timed out. */
    @Context
    public TerminationGuard guard;

    /** Neo4j's log (debug.log), which says when the model was loaded, or why it could not be. */
    @Context
    public Log log;

    /**
     * One L2-normalised vector of 384 numbers per text, in order. A null or blank text (nothing to
     * embed) gets an empty list at its position rather than failing the whole call; a null list
     * gives null. Only the first 256 tokens of a text count. The first call in a JVM loads the
     * model (about half a second).
     */
    @UserFunction(name = "membrane.embed")
    @Description("membrane.embed(texts :: LIST<STRING>) :: LIST<LIST<FLOAT>> - one L2-normalised 384-dimensional "
            + "all-MiniLM-L6-v2 vector per text, in order (texts embedded in batches; the first 256 tokens of each); "
            + "an empty list for a null or blank text.")
    public List<List<Double>> embed(@Name("texts") List<String> texts) {
        if (texts == null) {
            return null;
        }
        List<String> todo = new ArrayList<>(texts.size());
        for (String t : texts) {
            if (t != null && !t.isBlank()) {
                todo.add(t);
            }
        }
        float[][] vecs;
        try {
            vecs = todo.isEmpty() ? new float[0][] : Model.get(log).embed(todo, this::check);
        } catch (OrtException e) {
            throw new RuntimeException("membrane.embed: inference failed: " + e.getMessage(), e);
        }
        List<List<Double>> out = new ArrayList<>(texts.size());
        int next = 0;
        for (String t : texts) {
            if (t == null || t.isBlank()) {
                out.add(List.of());
                continue;
            }
            float[] v = vecs[next++];
            List<Double> l = new ArrayList<>(v.length);
            for (float f : v) {
                l.add((double) f);
            }
            out.add(l);
        }
        return out;
    }

    /** The name of the model membrane.embed runs, which Membrane stores beside each vector. */
    @UserFunction(name = "membrane.embedModel")
    @Description("membrane.embedModel() :: STRING - the name of the model membrane.embed runs (all-minilm-l6-v2-q).")
    public String embedModel() {
        return Model.NAME;
    }

    private void check() {
        if (guard != null) {
            guard.check();
        }
    }
}

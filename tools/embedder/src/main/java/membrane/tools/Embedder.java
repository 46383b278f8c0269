package membrane.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

/**
 * An offline embedding service for Membrane: all-MiniLM-L6-v2 (quantized, 384 dimensions), whose
 * ONNX model and tokenizer come inside its Maven Central jar, so nothing is fetched at run time.
 * It answers the OpenAI embeddings API that internal/embedding speaks: POST /v1/embeddings with
 * {"model", "input": string or [string]} returns {"data": [{"index", "embedding"}]}. Membrane
 * configures it as embedding.endpoint http://127.0.0.1:PORT/v1/embeddings, dimensions 384.
 *
 * <p>Usage: Embedder [port] [host] (default 8089 on 127.0.0.1). Prints EMBEDDER_READY when it serves.
 */
public final class Embedder {
  /** Bounds of one request, as internal/embedding's client sends (256 texts of 8,000 bytes). */
  static final int MAX_TEXTS = 256;
  static final int MAX_BODY = 4 << 20;
  static final String MODEL = "all-minilm-l6-v2-q";

  public static void main(String[] args) throws IOException {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 8089;
    String host = args.length > 1 ? args[1] : "127.0.0.1";
    var model = new AllMiniLmL6V2QuantizedEmbeddingModel();
    var json = new ObjectMapper();
    var server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(host), port), 0);
    server.createContext("/v1/embeddings", ex -> {
      try (ex) {
        if (!"POST".equals(ex.getRequestMethod())) {
          error(json, ex, 405, "POST only");
          return;
        }
        JsonNode req;
        try (InputStream in = ex.getRequestBody()) {
          byte[] body = in.readNBytes(MAX_BODY + 1);
          if (body.length > MAX_BODY) {
            error(json, ex, 413, "body over " + MAX_BODY + " bytes");
            return;
          }
          req = json.readTree(body);
        } catch (IOException e) {
          error(json, ex, 400, "body is not JSON");
          return;
        }
        List<TextSegment> texts = new ArrayList<>();
        JsonNode input = req == null ? null : req.get("input");
        if (input != null && input.isTextual()) {
          texts.add(TextSegment.from(input.asText()));
        } else if (input != null && input.isArray() && input.size() <= MAX_TEXTS) {
          for (JsonNode t : input) {
            if (!t.isTextual()) {
              error(json, ex, 400, "input must hold strings");
              return;
            }
            texts.add(TextSegment.from(t.asText()));
          }
        } else {
          error(json, ex, 400, "input must be a string or up to " + MAX_TEXTS + " strings");
          return;
        }
        // The model refuses blank text; its vector is the zero-information one of a space.
        texts.replaceAll(t -> t.text().isBlank() ? TextSegment.from(" ") : t);
        List<Embedding> vectors = texts.isEmpty() ? List.of() : model.embedAll(texts).content();
        ObjectNode out = json.createObjectNode().put("object", "list").put("model", MODEL);
        ArrayNode data = out.putArray("data");
        for (int i = 0; i < vectors.size(); i++) {
          ObjectNode d = data.addObject().put("object", "embedding").put("index", i);
          ArrayNode v = d.putArray("embedding");
          for (float f : vectors.get(i).vector()) {
            v.add(f);
          }
        }
        send(json, ex, 200, out);
      } catch (RuntimeException e) {
        System.err.println("embedder: " + e);
      }
    });
    // Inference uses every core for one batch; two requests at a time keep the latency of each.
    server.setExecutor(Executors.newFixedThreadPool(2));
    server.start();
    System.out.println("EMBEDDER_READY http://" + host + ":" + port + "/v1/embeddings model=" + MODEL + " dimensions=384");
  }

  static void error(ObjectMapper json, HttpExchange ex, int status, String message) throws IOException {
    ObjectNode out = json.createObjectNode();
    out.putObject("error").put("message", message);
    send(json, ex, status, out);
  }

  static void send(ObjectMapper json, HttpExchange ex, int status, JsonNode body) throws IOException {
    byte[] b = json.writeValueAsBytes(body);
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(status, b.length);
    ex.getResponseBody().write(b);
  }
}

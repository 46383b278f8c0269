// The in-database embedder's model and the length of its vectors, read by
// embedding $texts (one probe text): it also loads the model, so the first
// request does not wait for it, and a plugin that cannot run its model
// fails here, at start, rather than on the first write.
WITH membrane.embed($texts) AS vectors
RETURN membrane.embedModel() AS model, size(vectors[0]) AS dims

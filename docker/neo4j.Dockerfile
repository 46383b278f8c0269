# Neo4j 5.26 community with Membrane's embedding plugin (tools/neo4j-embed): the functions
# membrane.embed and membrane.embedModel, all-MiniLM-L6-v2 inside Neo4j, so vector search needs no
# embedding service (docs/retrieval.md, "The embedder inside Neo4j"). Built by docker-compose.yml
# from the repository root:
#   docker build -f docker/neo4j.Dockerfile .
# The plugin's native libraries are linux-x64 only: on an arm64 host the functions load but fail
# at their first call (docs/neo4j-local.md, "The embedding plugin").

FROM maven:3-eclipse-temurin-17 AS plugin
WORKDIR /src/tools/neo4j-embed
COPY tools/neo4j-embed/pom.xml ./
COPY tools/neo4j-embed/src ./src
# The cache keeps the ~130 MB of dependencies between builds (BuildKit, compose's default).
RUN --mount=type=cache,target=/root/.m2 mvn -B -q -Dmaven.artifact.threads=8 package

FROM neo4j:5.26-community
# The image's entrypoint loads the plugins in /plugins; said here too, so it does not depend on that.
ENV NEO4J_server_directories_plugins=/plugins
# DJL unpacks the tokenizer's native library into its cache dir (by default under the home
# directory) and ONNX Runtime into java.io.tmpdir: both on /tmp, writable whatever the user.
ENV DJL_CACHE_DIR=/tmp/djl
COPY --from=plugin /src/tools/neo4j-embed/target/plugins/membrane-neo4j-embed.jar /plugins/

# Multi-stage build: a static Go binary on a distroless, non-root base.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/membrane .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/membrane /membrane
USER nonroot:nonroot
EXPOSE 8080
ENV MEMBRANE_LISTEN=0.0.0.0:8080
ENTRYPOINT ["/membrane"]

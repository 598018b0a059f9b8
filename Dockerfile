# syntax=docker/dockerfile:1
# ragd in a container: `docker build -t ragd .`, then see compose.yaml. The image serves with an
# external PostgreSQL with pgvector (RAGD_DATABASE_URL): it has no PostgreSQL of its own.
# Models are directories mounted into it (ragd models pull NAME --dir ...).

# ONNX Runtime from the onnxruntime-node npm package, by scripts/setup.sh as on a machine
# (the pinned release, checked against its sha1).
FROM node:22-bookworm-slim AS onnxruntime
COPY scripts/setup.sh /src/scripts/setup.sh
COPY go.mod /src/go.mod
RUN /src/scripts/setup.sh --only onnxruntime

# ragd itself. cgo stays on: ONNX Runtime is loaded with dlopen at run time.
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
	go build -trimpath -o /out/ragd ./cmd/ragd

FROM debian:bookworm-slim
# ca-certificates: URL ingest and `ragd models pull` speak https.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
	&& rm -rf /var/lib/apt/lists/*
COPY --from=onnxruntime /usr/local/lib/libonnxruntime.so.* /usr/local/lib/
RUN ldconfig
COPY --from=build /out/ragd /usr/local/bin/ragd
RUN useradd --system --uid 10001 --home-dir /var/lib/ragd --create-home ragd \
	&& mkdir /models && chown ragd: /models
USER ragd
WORKDIR /var/lib/ragd
ENV RAGD_DATA_DIR=/var/lib/ragd RAGD_LISTEN=0.0.0.0:8080
VOLUME /var/lib/ragd
EXPOSE 8080
ENTRYPOINT ["ragd"]
CMD ["serve"]

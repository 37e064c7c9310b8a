# An image holding local wheels (the torch CPU wheel) for Dockerfile.worker's WHEELS_IMAGE, built from
# the wheels' own folder, so they are never part of the project's build context:
#   docker build -f docker/wheels.Dockerfile -t transq-torch-wheels --build-arg BASE_IMAGE=… docker/wheels
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
COPY . /wheels

"""Creates an S3 bucket at $AWS_ENDPOINT_URL (the CI's moto server), waiting for the server to
answer first. object_store has no call for creating buckets, so CI makes its test bucket here."""
import os
import sys
import time

import boto3
import botocore.exceptions

bucket = sys.argv[1]
client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
deadline = time.monotonic() + 60
while True:
    try:
        client.create_bucket(Bucket=bucket)
        break
    except (botocore.exceptions.EndpointConnectionError, ConnectionError):
        if time.monotonic() > deadline:
            sys.exit(f"no S3 endpoint at {os.environ['AWS_ENDPOINT_URL']} after 60 s")
        time.sleep(0.5)
print(f"bucket {bucket} at {os.environ['AWS_ENDPOINT_URL']}")

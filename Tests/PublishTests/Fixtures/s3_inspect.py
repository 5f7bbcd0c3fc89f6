"""Prints, as JSON, every object of a bucket under a prefix as boto3 sees it: key -> ETag (bare
hex), Content-Type, Cache-Control, size and LastModified. Credentials from the environment.

usage: s3_inspect.py PORT BUCKET PREFIX
       s3_inspect.py PORT BUCKET PREFIX put KEY FILE      (an object put behind tvimport's back)
       s3_inspect.py PORT BUCKET PREFIX delete KEY
"""
import json
import sys

import boto3

port, bucket, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1")
if len(sys.argv) > 4:
    action, key = sys.argv[4], sys.argv[5]
    if action == "put":
        with open(sys.argv[6], "rb") as body:
            s3.put_object(Bucket=bucket, Key=key, Body=body.read())
    else:
        s3.delete_object(Bucket=bucket, Key=key)
    sys.exit(0)

objects = {}
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
    for item in page.get("Contents", []):
        head = s3.head_object(Bucket=bucket, Key=item["Key"])
        objects[item["Key"]] = {
            "etag": item["ETag"].strip('"'),
            "contentType": head.get("ContentType"),
            "cacheControl": head.get("CacheControl"),
            "size": item["Size"],
            "lastModified": item["LastModified"].isoformat(),
        }
print(json.dumps(objects, sort_keys=True))

"""Prepares a running moto S3 server for the publishing tests: an IAM user with an access key
allowed s3:* , a bucket, then turns on moto's request authentication (every later request must
carry a valid SigV4 signature of that key). Prints "ACCESS_KEY_ID SECRET_ACCESS_KEY".

usage: s3_setup.py PORT BUCKET
"""
import json
import sys
import urllib.request

import boto3

port, bucket = sys.argv[1], sys.argv[2]
endpoint = f"http://127.0.0.1:{port}"
# Authentication is still off: any key works for the set-up itself.
anyone = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
iam = boto3.client("iam", **anyone)
iam.create_user(UserName="publisher")
key = iam.create_access_key(UserName="publisher")["AccessKey"]
policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
iam.put_user_policy(UserName="publisher", PolicyName="publish", PolicyDocument=json.dumps(policy))
boto3.client("s3", **anyone).create_bucket(Bucket=bucket)
request = urllib.request.Request(endpoint + "/moto-api/reset-auth", data=b"0", method="POST",
                                 headers={"Content-Type": "text/plain"})
urllib.request.urlopen(request).read()
print(key["AccessKeyId"], key["SecretAccessKey"])

"""A Quarry RPC client that knows nothing but the served contract: it downloads the FileDescriptorSet from
GET /api/rpc.contract, builds message classes from it at run time (no generated code, no Quarry code),
encodes a quarry.v1.Call, posts it to POST /api/rpc as application/proto, and decodes the answer.

    python3 python-client.py URL CA_FILE CAP PROCEDURE REQUEST_JSON

CAP may be "-" for none. Prints one JSON object: {"status", "rpc_contract", "etag", "answer"} where
answer is the response message as proto-JSON (proto field names), or the Connect error body.
"""
import json
import ssl
import sys
import urllib.error
import urllib.request

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory


def message_class(pool, name):
    desc = pool.FindMessageTypeByName(name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def main():
    url, ca_file, cap, procedure, request_json = sys.argv[1:6]
    ctx = ssl.create_default_context(cafile=ca_file)
    headers = {} if cap == "-" else {"Authorization": "Bearer " + cap}

    with urllib.request.urlopen(urllib.request.Request(url + "/api/rpc.contract", headers=headers), context=ctx) as r:
        etag = r.headers["ETag"]
        fds = descriptor_pb2.FileDescriptorSet.FromString(r.read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:  # imports come first in the set
        pool.Add(f)

    service_name, method_name = procedure.split("/")
    method = pool.FindServiceByName(service_name).FindMethodByName(method_name)
    request = message_class(pool, method.input_type.full_name)()
    json_format.Parse(request_json, request)
    call = message_class(pool, "quarry.v1.Call")(procedure=procedure, message=request.SerializeToString())

    req = urllib.request.Request(url + "/api/rpc", data=call.SerializeToString(), method="POST",
                                 headers={**headers, "Content-Type": "application/proto"})
    try:
        with urllib.request.urlopen(req, context=ctx) as r:
            status, contract, body = r.status, r.headers["Rpc-Contract"], r.read()
        response = message_class(pool, method.output_type.full_name).FromString(body)
        answer = json_format.MessageToDict(response, preserving_proto_field_name=True)
    except urllib.error.HTTPError as e:
        status, contract, answer = e.code, e.headers["Rpc-Contract"], json.loads(e.read())
    print(json.dumps({"status": status, "rpc_contract": contract, "etag": etag, "answer": answer}))


if __name__ == "__main__":
    main()

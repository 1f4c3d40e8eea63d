//! The contract as lists, for the tests that go through every method, action or route: the
//! gRPC services' methods and the tool's actions from the descriptors protoc makes of the
//! proto crate's `.proto` files (`build.rs`), the HTTP routes from the controller's own table,
//! the one its router is built from.

use prost::Message as _;
use prost_types::FileDescriptorSet;

/// The `.proto` files' descriptors, as the proto crate exports them.
static DESCRIPTORS: &[u8] = nanomuse_proto::FILE_DESCRIPTOR_SET;

fn descriptors() -> FileDescriptorSet {
    FileDescriptorSet::decode(DESCRIPTORS).expect("protoc's descriptor set")
}

/// The methods of gRPC service `service` (its name without the package), in declared order.
pub fn rpc_methods(service: &str) -> Vec<String> {
    let files = descriptors().file;
    let found = files
        .iter()
        .flat_map(|file| &file.service)
        .find(|s| s.name() == service)
        .unwrap_or_else(|| panic!("no service {service} in the .proto files"));
    found
        .method
        .iter()
        .map(|method| method.name().to_string())
        .collect()
}

/// The fields of `ActRequest`'s `oneof action`: every action of the tool, in declared order.
pub fn action_names() -> Vec<String> {
    let files = descriptors().file;
    let request = files
        .iter()
        .flat_map(|file| &file.message_type)
        .find(|message| message.name() == "ActRequest")
        .expect("ActRequest in the .proto files");
    let oneof = request
        .oneof_decl
        .iter()
        .position(|oneof| oneof.name() == "action")
        .expect("ActRequest's oneof action");
    request
        .field
        .iter()
        .filter(|field| field.oneof_index == Some(oneof as i32))
        .map(|field| field.name().to_string())
        .collect()
}

/// (method, path) of every route of the controller's HTTP API and card, in the router's order.
pub fn http_routes() -> Vec<(String, String)> {
    nanomuse_controller::http::ROUTES
        .iter()
        .map(|route| (route.method.to_string(), route.path.to_string()))
        .collect()
}

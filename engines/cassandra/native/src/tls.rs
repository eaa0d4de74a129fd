//! TLS from the PEM contents of the phase spec (agents/cql/tls.py's TlsOptions), through
//! openssl: the CA is the only trust anchor; a client certificate when given.
//!
//! When a session cannot be built, `handshake_failure` makes one handshake with a node
//! as the driver makes it (the chain against the CA, no name check), so that a wrong CA
//! or a refused client certificate is one line naming the node and the cause instead of
//! the driver's pool error (`error:0A000086:SSL routines:...`).

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use openssl::pkey::PKey;
use openssl::ssl::{HandshakeError, Ssl, SslConnector, SslConnectorBuilder, SslMethod, SslVerifyMode};
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::{X509VerifyResult, X509};
use scylla::client::session::OpenSsl010Config;

#[derive(Clone)]
pub struct TlsPem {
    pub ca_pem: String,
    pub cert_pem: Option<String>,
    pub key_pem: Option<String>,
}

fn connector(tls: &TlsPem) -> Result<SslConnectorBuilder, String> {
    let e = |what: &str, err: openssl::error::ErrorStack| format!("TLS {what}: {err}");
    let mut builder = SslConnector::builder(SslMethod::tls_client()).map_err(|x| e("context", x))?;
    let mut store = X509StoreBuilder::new().map_err(|x| e("store", x))?;
    for cert in X509::stack_from_pem(tls.ca_pem.as_bytes()).map_err(|x| e("CA", x))? {
        store.add_cert(cert).map_err(|x| e("CA", x))?;
    }
    builder.set_cert_store(store.build());
    builder.set_verify(SslVerifyMode::PEER);
    if let (Some(cert), Some(key)) = (&tls.cert_pem, &tls.key_pem) {
        let cert = X509::from_pem(cert.as_bytes()).map_err(|x| e("client certificate", x))?;
        let key = PKey::private_key_from_pem(key.as_bytes()).map_err(|x| e("client key", x))?;
        builder.set_certificate(&cert).map_err(|x| e("client certificate", x))?;
        builder.set_private_key(&key).map_err(|x| e("client key", x))?;
    }
    Ok(builder)
}

/// How long a probe waits for a node's refusal of the client certificate.
const REFUSAL_WAIT: Duration = Duration::from_secs(2);

fn reason(err: &openssl::ssl::Error) -> String {
    err.ssl_error()
        .and_then(|stack| stack.errors().iter().find_map(|e| e.reason()))
        .map(|r| r.replace('_', " ").to_lowercase())
        .unwrap_or_else(|| err.to_string())
}

pub fn config(tls: &TlsPem) -> Result<OpenSsl010Config, String> {
    Ok(OpenSsl010Config::new(connector(tls)?))
}

/// Why a TLS handshake with `node` ("address:port") fails, in a few words
/// (`certificate verify failed: unable to get local issuer certificate`); None when it
/// succeeds, or when the node cannot be reached or does not answer within `timeout`
/// (then the driver's own error says more).
pub fn handshake_failure(tls: &TlsPem, node: &str, timeout: Duration) -> Option<String> {
    let context = connector(tls).ok()?.build().into_context();
    let address = node.to_socket_addrs().ok()?.next()?;
    let stream = TcpStream::connect_timeout(&address, timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    let ssl = Ssl::new(&context).ok()?; // as the driver: no name check, no SNI
    match ssl.connect(stream) {
        Ok(mut stream) => {
            // TLS 1.3: the node judges the client certificate after the client's side of
            // the handshake is done, and its refusal (an alert) is the first thing read.
            // A node that accepted says nothing until asked: the read times out.
            stream.get_ref().set_read_timeout(Some(timeout.min(REFUSAL_WAIT))).ok()?;
            match stream.ssl_read(&mut [0u8; 1]) {
                Err(err) => err.ssl_error().map(|_| reason(&err)),
                Ok(_) => None,
            }
        }
        Err(HandshakeError::Failure(mid)) => {
            let verified = mid.ssl().verify_result();
            if verified != X509VerifyResult::OK {
                return Some(format!("certificate verify failed: {}", verified.error_string()));
            }
            Some(reason(mid.error()))
        }
        Err(HandshakeError::SetupFailure(err)) => Some(err.to_string()),
        Err(HandshakeError::WouldBlock(_)) => None, // timed out: not a certificate's fault
    }
}

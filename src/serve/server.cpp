#include "serve/server.h"

#include <httplib.h>
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <mutex>
#include <thread>

#include "common/errors.h"
#include "serve/pages.h"

namespace kbench::serve {

namespace {

constexpr std::size_t kServeThreads = 64;

// The store layer and the report renderers were written for one command
// per process and are not reviewed for concurrent use: pages are made one
// at a time (a local dashboard has one reader).
std::mutex page_mutex;

void send(httplib::Response& response, const Reply& reply) {
  response.status = reply.status;
  response.set_content(reply.html, "text/html; charset=utf-8");
}

// Every failure becomes a page: bad input 400, anything else 500 with its
// message; the server goes on serving.
httplib::Server::Handler page(const std::string& store_url, Reply (*make)(const std::string&, const Query&)) {
  return [store_url, make](const httplib::Request& request, httplib::Response& response) {
    std::lock_guard lock(page_mutex);
    try {
      send(response, make(store_url, request.params));
    } catch (const InputError& e) {
      send(response, error_page(400, e.what()));
    } catch (const std::exception& e) {
      std::cerr << "kbench serve: " << request.method << " " << request.target << ": " << e.what() << "\n";
      send(response, error_page(500, e.what()));
    } catch (...) {
      std::cerr << "kbench serve: " << request.method << " " << request.target << ": unknown error\n";
      send(response, error_page(500, "unknown error"));
    }
  };
}

void method_not_allowed(const httplib::Request& request, httplib::Response& response) {
  send(response, error_page(405, request.method + " " + request.path + ": the dashboard only reads (GET)"));
  response.set_header("Allow", "GET, HEAD");
}

}  // namespace

void serve(const ServeOptions& options) {
  // SIGINT and SIGTERM are taken by sigwait below, in this thread only: the
  // server's threads inherit the blocked mask. SIGUSR1 is the server thread
  // saying it stopped by itself.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  httplib::Server server;
  // httplib gives each connection a pool thread until it closes or its read
  // timeout (--idle-timeout, 5 s by default) passes, so with the default pool (8 threads here) a few
  // idle keep-alive connections of browsers or scanners queued every page
  // behind them (23 s with 40 open). Threads that wait on a socket cost
  // little; 64 of them serve a team's browsers.
  server.new_task_queue = [] { return new httplib::ThreadPool(kServeThreads); };
  server.set_read_timeout(options.idle_timeout_seconds, 0);
  server.set_keep_alive_timeout(options.idle_timeout_seconds);
  server.Get("/", page(options.store_url, index_page));
  server.Get("/compare", page(options.store_url, compare_page));
  server.Get("/trend", page(options.store_url, trend_page));
  server.Get(".*", [](const httplib::Request& request, httplib::Response& response) {
    send(response, error_page(404, "no page " + request.path + " (the dashboard has /, /compare and /trend)"));
  });
  // Every method reaches this first, also those without a handler
  // registration (TRACE, CONNECT).
  server.set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response)
                                     -> httplib::Server::HandlerResponse {
    if (request.method == "GET" || request.method == "HEAD") return httplib::Server::HandlerResponse::Unhandled;
    method_not_allowed(request, response);
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own refusals (a malformed request line, an unknown method) come
  // without a body: they get the same small page as ours.
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& response) -> httplib::Server::HandlerResponse {
    if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    send(response, error_page(response.status, "the server could not read this request"));
    return httplib::Server::HandlerResponse::Handled;
  }));
  server.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr) {
    send(response, error_page(500, "internal error"));
  });

  const auto& listen = options.listen;
  int port = listen.port;
  if (port == 0) {
    port = server.bind_to_any_port(listen.host);
    if (port < 0) port = 0;
  } else if (!server.bind_to_port(listen.host, port)) {
    port = 0;
  }
  if (port == 0) {
    const bool v6 = listen.host.find(':') != std::string::npos;
    throw RunError("--listen " + (v6 ? "[" + listen.host + "]" : listen.host) + ":" + std::to_string(listen.port) +
                   ": cannot listen there (port in use, not permitted, or not an address of this machine)");
  }
  if (!is_loopback(listen.host)) {
    std::cerr << "kbench serve: warning: listening on " << listen.host
              << ", not loopback: anyone who can reach this machine can read the store " << options.store_url
              << "\n";
  }
  std::cout << url_of(listen.host, port) << std::endl;
  std::cerr << "kbench serve: reading " << options.store_url << " (read-only); Ctrl-C stops\n";

  std::thread worker([&server] {
    server.listen_after_bind();
    kill(getpid(), SIGUSR1);
  });
  int signal = 0;
  sigwait(&signals, &signal);
  server.stop();
  worker.join();
  if (signal == SIGUSR1) throw RunError("the HTTP server stopped unexpectedly");
}

}  // namespace kbench::serve

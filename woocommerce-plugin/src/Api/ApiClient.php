<?php
/**
 * The ServicePay API over WordPress's HTTP API.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Api;

use ServicePay\WooCommerce\Logger;

defined( 'ABSPATH' ) || exit;

/**
 * Sends the secret key as a bearer token, reads the envelope, and retries what is safe to retry: connection
 * errors, 429 and 5xx, and for a POST only when it carries an `Idempotency-Key` (the service then answers the
 * first result again instead of making a second session).
 */
final class ApiClient {

	private const ATTEMPTS = 3;

	/**
	 * API base URL.
	 *
	 * @var string
	 */
	private string $base_url;

	/**
	 * Secret key.
	 *
	 * @var string
	 */
	private string $secret_key;

	/**
	 * Seconds to wait for an answer.
	 *
	 * @var int
	 */
	private int $timeout;

	/**
	 * Builds a client.
	 *
	 * @param string $base_url   e.g. `http://127.0.0.1:4242`.
	 * @param string $secret_key `sk_test_…` or `sk_live_…`.
	 * @param int    $timeout    Seconds to wait for each answer (a customer's page asks with less).
	 */
	public function __construct( string $base_url, string $secret_key, int $timeout = 15 ) {
		$this->base_url   = untrailingslashit( $base_url );
		$this->secret_key = $secret_key;
		$this->timeout    = $timeout;
	}

	/**
	 * `GET /api/widget/profile`: `{ merchantName, environment, currencies: [{ currency, minAmount, maxAmount }] }`.
	 *
	 * @return array<string,mixed>
	 */
	public function profile(): array {
		return $this->request( 'GET', '/api/widget/profile' );
	}

	/**
	 * `POST /api/widget/sessions`.
	 *
	 * @param array<string,mixed> $params          Session fields.
	 * @param string              $idempotency_key One per order attempt.
	 * @return array<string,mixed>
	 */
	public function create_session( array $params, string $idempotency_key ): array {
		return $this->request( 'POST', '/api/widget/sessions', $params, $idempotency_key );
	}

	/**
	 * `GET /api/widget/sessions/{id}`.
	 *
	 * @param string $session_id Session id.
	 * @return array<string,mixed>
	 */
	public function get_session( string $session_id ): array {
		return $this->request( 'GET', '/api/widget/sessions/' . rawurlencode( $session_id ) );
	}

	/**
	 * `POST /api/widget/sessions/{id}/cancel`.
	 *
	 * @param string $session_id Session id.
	 * @return array<string,mixed>
	 */
	public function cancel_session( string $session_id ): array {
		return $this->request( 'POST', '/api/widget/sessions/' . rawurlencode( $session_id ) . '/cancel', null, 'cancel-' . $session_id );
	}

	/**
	 * `POST /api/widget/sessions/{id}/refunds`: `{ amount?, reason? }`, answers the refund.
	 *
	 * @param string              $session_id      Session id.
	 * @param array<string,mixed> $params          `amount` in minor units (default: what is left), `reason`.
	 * @param string              $idempotency_key One per WooCommerce refund.
	 * @return array<string,mixed>
	 */
	public function create_refund( string $session_id, array $params, string $idempotency_key ): array {
		return $this->request( 'POST', '/api/widget/sessions/' . rawurlencode( $session_id ) . '/refunds', $params, $idempotency_key );
	}

	/**
	 * Sends one request and returns the envelope's `data`.
	 *
	 * @param string                   $method          HTTP method.
	 * @param string                   $path            Path from the base URL.
	 * @param array<string,mixed>|null $body            JSON body.
	 * @param string|null              $idempotency_key Makes a POST safe to retry.
	 * @return array<string,mixed>
	 * @throws ApiException When the service refuses or cannot be reached.
	 */
	public function request( string $method, string $path, ?array $body = null, ?string $idempotency_key = null ): array {
		$headers = array(
			'Authorization' => 'Bearer ' . $this->secret_key,
			'Accept'        => 'application/json',
			'User-Agent'    => 'servicepay-woocommerce/' . ( defined( 'SERVICEPAY_WC_VERSION' ) ? SERVICEPAY_WC_VERSION : 'dev' ),
		);
		if ( null !== $body ) {
			$headers['Content-Type'] = 'application/json';
		}
		if ( null !== $idempotency_key ) {
			$headers['Idempotency-Key'] = $idempotency_key;
		}
		$retryable = 'POST' !== $method || null !== $idempotency_key;
		$last      = null;
		for ( $attempt = 1; $attempt <= self::ATTEMPTS; $attempt++ ) {
			$response = wp_remote_request(
				$this->base_url . $path,
				array(
					'method'      => $method,
					'headers'     => $headers,
					'body'        => null === $body ? null : wp_json_encode( $body ),
					'timeout'     => $this->timeout,
					'redirection' => 0,
				)
			);
			if ( is_wp_error( $response ) ) {
				$last = new ApiException(
					0,
					'connection_error',
					/* translators: 1: API address, 2: what went wrong, e.g. "nothing accepted the connection" */
					sprintf( __( 'ServicePay could not be reached at %1$s: %2$s.', 'servicepay-woocommerce' ), $this->base_url, ConnectionProblem::describe( $response->get_error_message() ) )
				);
			} else {
				$status = (int) wp_remote_retrieve_response_code( $response );
				$json   = json_decode( (string) wp_remote_retrieve_body( $response ), true );
				if ( $status >= 200 && $status < 300 && is_array( $json ) ) {
					return is_array( $json['data'] ?? null ) ? $json['data'] : array();
				}
				$meta = is_array( $json ) && is_array( $json['meta'] ?? null ) ? $json['meta'] : array();
				$last = new ApiException(
					$status,
					is_string( $meta['code'] ?? null ) ? $meta['code'] : 'http_' . $status,
					is_string( $meta['message'] ?? null ) ? $meta['message'] : 'ServicePay answered HTTP ' . $status . '.',
					(string) wp_remote_retrieve_header( $response, 'request-id' )
				);
				if ( 429 !== $status && $status < 500 ) {
					throw $last;
				}
			}
			if ( ! $retryable || self::ATTEMPTS === $attempt ) {
				break;
			}
			usleep( 200000 * $attempt );
		}
		Logger::warning(
			'ServicePay request failed',
			array(
				'method'    => $method,
				'path'      => preg_replace( '#/ses_[A-Za-z0-9]+#', '/ses_…', $path ),
				'status'    => $last->status,
				'code'      => $last->error_code,
				'requestId' => $last->request_id,
			)
		);
		throw $last;
	}
}

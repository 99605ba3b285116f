<?php
/**
 * An answer of the ServicePay API that was not a success, or no answer.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Api;

defined( 'ABSPATH' ) || exit;

/**
 * Carries the envelope's `statusCode` (0 when the service could not be reached), `code` and `requestId`.
 */
final class ApiException extends \RuntimeException {

	/**
	 * HTTP status; 0 for a connection error.
	 *
	 * @var int
	 */
	public int $status;

	/**
	 * `meta.code` (`connection_error` when unreachable).
	 *
	 * @var string
	 */
	public string $error_code;

	/**
	 * `Request-Id`, to quote to support.
	 *
	 * @var string
	 */
	public string $request_id;

	/**
	 * Builds it.
	 *
	 * @param int    $status     HTTP status.
	 * @param string $error_code Stable code.
	 * @param string $message    Message from the service.
	 * @param string $request_id Request id.
	 */
	public function __construct( int $status, string $error_code, string $message, string $request_id = '' ) {
		parent::__construct( $message );
		$this->status     = $status;
		$this->error_code = $error_code;
		$this->request_id = $request_id;
	}
}
